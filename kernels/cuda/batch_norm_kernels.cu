#include "kernels/cuda/batch_norm_kernels.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/grid_stride.h"

namespace distconv {
namespace {

using internal::for_each_element;
using internal::grid_stride_blocks;
using internal::kThreadsPerBlock;

// The sums' blocks: kLanes consecutive channels (one warp reads one
// contiguous run of a row) by kRows rows at a time, at most kMaxRowBlocks
// blocks down the rows.
constexpr int kLanes = 32;
constexpr int kRows = 8;
constexpr Index kMaxRowBlocks = 256;

Index row_blocks(Index rows) {
  return std::clamp<Index>((rows + kRows - 1) / kRows, 1, kMaxRowBlocks);
}

// Block (x, y) sums channels [x * kLanes, (x + 1) * kLanes) over rows
// y * kRows + i + k * gridDim.y * kRows, into part0/part1[y * channels + c].
template <typename T>
__global__ void __launch_bounds__(kLanes* kRows)
    partial_sums(ChannelSum what, const T* __restrict__ x,
                 const T* __restrict__ dy, std::int64_t rows,
                 std::int64_t channels, const double* __restrict__ mean,
                 double* __restrict__ part0, double* __restrict__ part1) {
  __shared__ double s0[kRows][kLanes];
  __shared__ double s1[kRows][kLanes];
  const std::int64_t c = std::int64_t{blockIdx.x} * kLanes + threadIdx.x;
  double a0 = 0, a1 = 0;
  if (c < channels) {
    const double m = what == ChannelSum::kValues ? 0.0 : mean[c];
    const std::int64_t step = std::int64_t{gridDim.y} * kRows;
    for (std::int64_t r = std::int64_t{blockIdx.y} * kRows + threadIdx.y;
         r < rows; r += step) {
      const double v = static_cast<double>(x[r * channels + c]);
      if (what == ChannelSum::kValues) {
        a0 += v;
      } else if (what == ChannelSum::kSquaredDeviations) {
        a0 += (v - m) * (v - m);
      } else {
        const double g = static_cast<double>(dy[r * channels + c]);
        a0 += g;
        a1 += g * (v - m);
      }
    }
  }
  s0[threadIdx.y][threadIdx.x] = a0;
  s1[threadIdx.y][threadIdx.x] = a1;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  for (int i = 1; i < kRows; ++i) {
    a0 += s0[i][threadIdx.x];
    a1 += s1[i][threadIdx.x];
  }
  part0[std::int64_t{blockIdx.y} * channels + c] = a0;
  part1[std::int64_t{blockIdx.y} * channels + c] = a1;
}

// One thread per channel adds the blocks' partials in block order.
__global__ void __launch_bounds__(kThreadsPerBlock)
    finish_sums(std::int64_t blocks, std::int64_t channels, std::int64_t rows,
                const double* part0, const double* part1, double* out0,
                double* out1, double* out_mean) {
  for_each_element(channels, [&](std::int64_t c) {
    double a0 = 0, a1 = 0;
    for (std::int64_t b = 0; b < blocks; ++b) {
      a0 += part0[b * channels + c];
      a1 += part1[b * channels + c];
    }
    out0[c] = a0;
    if (out1 != nullptr) out1[c] = a1;
    if (out_mean != nullptr) out_mean[c] = rows > 0 ? a0 / rows : 0.0;
  });
}

// No __restrict__ on the element-wise passes: outputs may be inputs.
template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    affine_kernel(const T* x, std::int64_t n, std::int64_t channels,
                  const double* mean, const double* a, const double* b,
                  T* y) {
  for_each_element(n, [&](std::int64_t e) {
    const std::int64_t c = e % channels;
    y[e] = static_cast<T>((static_cast<double>(x[e]) - mean[c]) * a[c] + b[c]);
  });
}

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    diff_src_kernel(const T* x, const T* dy, std::int64_t n,
                    std::int64_t channels, const double* mean,
                    const double* a, const double* dy_mean, const double* k,
                    T* dx) {
  for_each_element(n, [&](std::int64_t e) {
    const std::int64_t c = e % channels;
    const double dev = static_cast<double>(x[e]) - mean[c];
    dx[e] = static_cast<T>(
        a[c] * ((static_cast<double>(dy[e]) - dy_mean[c]) - dev * k[c]));
  });
}

}  // namespace

Index channel_sums_scratch(Index rows, Index channels) {
  return 2 * row_blocks(rows) * channels;
}

template <typename T>
void launch_channel_sums(ChannelSum what, const T* x, const T* dy, Index rows,
                         Index channels, const double* mean, double* scratch,
                         double* out0, double* out1, double* out_mean,
                         CUstream_st* stream) {
  if (channels == 0) return;
  const Index blocks = row_blocks(rows);
  double* part0 = scratch;
  double* part1 = scratch + blocks * channels;
  const dim3 grid(static_cast<unsigned>((channels + kLanes - 1) / kLanes),
                  static_cast<unsigned>(blocks));
  partial_sums<T><<<grid, dim3(kLanes, kRows), 0, stream>>>(
      what, x, dy, rows, channels, mean, part0, part1);
  finish_sums<<<grid_stride_blocks(channels), kThreadsPerBlock, 0, stream>>>(
      blocks, channels, rows, part0, part1, out0, out1, out_mean);
  internal::check_cuda(cudaGetLastError(),
                       "the GPU batch normalisation sums' launch");
}

template <typename T>
void launch_batch_norm_affine(const T* x, Index elements, Index channels,
                              const double* mean, const double* a,
                              const double* b, T* y, CUstream_st* stream) {
  if (elements == 0) return;
  affine_kernel<T>
      <<<grid_stride_blocks(elements), kThreadsPerBlock, 0, stream>>>(
          x, elements, channels, mean, a, b, y);
  internal::check_cuda(cudaGetLastError(),
                       "the GPU batch normalisation forward launch");
}

template <typename T>
void launch_batch_norm_diff_src(const T* x, const T* dy, Index elements,
                                Index channels, const double* mean,
                                const double* a, const double* dy_mean,
                                const double* k, T* dx, CUstream_st* stream) {
  if (elements == 0) return;
  diff_src_kernel<T>
      <<<grid_stride_blocks(elements), kThreadsPerBlock, 0, stream>>>(
          x, dy, elements, channels, mean, a, dy_mean, k, dx);
  internal::check_cuda(cudaGetLastError(),
                       "the GPU batch normalisation backward launch");
}

#define DISTCONV_INSTANTIATE(T)                                               \
  template void launch_channel_sums<T>(ChannelSum, const T*, const T*, Index, \
                                       Index, const double*, double*,        \
                                       double*, double*, double*,            \
                                       CUstream_st*);                        \
  template void launch_batch_norm_affine<T>(const T*, Index, Index,          \
                                            const double*, const double*,    \
                                            const double*, T*, CUstream_st*); \
  template void launch_batch_norm_diff_src<T>(                                \
      const T*, const T*, Index, Index, const double*, const double*,         \
      const double*, const double*, T*, CUstream_st*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
