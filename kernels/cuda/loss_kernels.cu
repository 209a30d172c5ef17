#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/cuda/loss_kernels.h"

namespace distconv {
namespace {

using internal::for_each_element;
using internal::grid_stride_blocks;
using internal::kThreadsPerBlock;

constexpr Index kMaxBlocksPerSample = 64;
constexpr Index kMaxSampleBlocks = 65535;  // gridDim.y

template <typename T, typename Target>
__global__ void __launch_bounds__(kThreadsPerBlock)
    sums_kernel(LossCellDesc d, LossTerms what, CellWalk<2> w,
                const T* __restrict__ x, const Target* __restrict__ t,
                std::int64_t blocks, double* __restrict__ partials) {
  __shared__ double s[3][kThreadsPerBlock];
  const std::int64_t per = w.per_sample();
  const std::int64_t step = blocks * kThreadsPerBlock;
  for (std::int64_t n = blockIdx.y; n < w.samples; n += gridDim.y) {
    double a[3] = {0, 0, 0};
    for (std::int64_t i =
             std::int64_t{blockIdx.x} * kThreadsPerBlock + threadIdx.x;
         i < per; i += step) {
      std::int64_t at[2];
      w.offsets(n, i, at);
      const LossCellTerm term =
          what == LossTerms::kCountsOnly
              ? loss_cell_count(d, t + at[1])
              : loss_cell_term(d, x + at[0], w.stride[0][1], t + at[1],
                               w.stride[1][1]);
      a[0] += term.loss;
      a[1] += term.count;
      a[2] += term.bad;
    }
    for (int k = 0; k < 3; ++k) s[k][threadIdx.x] = a[k];
    __syncthreads();
    for (int half = kThreadsPerBlock / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        for (int k = 0; k < 3; ++k) {
          s[k][threadIdx.x] += s[k][threadIdx.x + half];
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      for (int k = 0; k < 3; ++k) {
        partials[(n * blocks + blockIdx.x) * 3 + k] = s[k][0];
      }
    }
    __syncthreads();  // s is reused for the next sample
  }
}

// No __restrict__: dx may be x.
template <typename T, typename Target>
__global__ void __launch_bounds__(kThreadsPerBlock)
    gradient_kernel(LossCellDesc d, double scale, CellWalk<3> w, T* dx,
                    const T* x, const Target* t) {
  const std::int64_t per = w.per_sample();
  for_each_element(w.cells(), [&](std::int64_t e) {
    std::int64_t at[3];
    w.offsets(e / per, e % per, at);
    loss_cell_gradient(d, scale, x + at[1], w.stride[1][1], t + at[2],
                       w.stride[2][1], dx + at[0], w.stride[0][1]);
  });
}

}  // namespace

Index loss_sums_blocks(const CellWalk<2>& walk) {
  return std::clamp<Index>(
      (walk.per_sample() + kThreadsPerBlock - 1) / kThreadsPerBlock, 1,
      kMaxBlocksPerSample);
}

template <typename T, typename Target>
void launch_loss_sums(const LossCellDesc& desc, LossTerms what,
                      const CellWalk<2>& walk, const T* x, const Target* t,
                      double* partials, CUstream_st* stream) {
  if (walk.cells() == 0) return;
  const Index blocks = loss_sums_blocks(walk);
  const dim3 grid(
      static_cast<unsigned>(blocks),
      static_cast<unsigned>(std::min<Index>(walk.samples, kMaxSampleBlocks)));
  sums_kernel<T, Target><<<grid, kThreadsPerBlock, 0, stream>>>(
      desc, what, walk, x, t, blocks, partials);
  internal::check_cuda(cudaGetLastError(), "the GPU loss sums' launch");
}

template <typename T, typename Target>
void launch_loss_gradient(const LossCellDesc& desc, double w,
                          const CellWalk<3>& walk, T* dx, const T* x,
                          const Target* t, CUstream_st* stream) {
  const std::int64_t n = walk.cells();
  if (n == 0) return;
  gradient_kernel<T, Target>
      <<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(desc, w, walk,
                                                               dx, x, t);
  internal::check_cuda(cudaGetLastError(), "the GPU loss gradient launch");
}

#define DISTCONV_INSTANTIATE(T, Target)                              \
  template void launch_loss_sums<T, Target>(                         \
      const LossCellDesc&, LossTerms, const CellWalk<2>&, const T*,  \
      const Target*, double*, CUstream_st*);                         \
  template void launch_loss_gradient<T, Target>(                     \
      const LossCellDesc&, double, const CellWalk<3>&, T*, const T*, \
      const Target*, CUstream_st*);
DISTCONV_INSTANTIATE(float, float)
DISTCONV_INSTANTIATE(float, std::int64_t)
DISTCONV_INSTANTIATE(double, double)
DISTCONV_INSTANTIATE(double, std::int64_t)
DISTCONV_INSTANTIATE(bf16, bf16)
DISTCONV_INSTANTIATE(fp16, fp16)
DISTCONV_INSTANTIATE(bf16, std::int64_t)
DISTCONV_INSTANTIATE(fp16, std::int64_t)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
