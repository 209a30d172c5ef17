#include <cuda_runtime_api.h>

#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/cuda/softmax_kernels.h"

namespace distconv {
namespace {

using internal::for_each_element;
using internal::grid_stride_blocks;
using internal::kThreadsPerBlock;

// No __restrict__: outputs may be inputs (each thread reads and writes its
// own cell).
template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    forward_kernel(SoftmaxKind kind, CellWalk<2> w, T* y, const T* x) {
  const std::int64_t per = w.per_sample();
  for_each_element(w.cells(), [&](std::int64_t e) {
    std::int64_t at[2];
    w.offsets(e / per, e % per, at);
    softmax_cell_forward(kind, w.channels, x + at[1], w.stride[1][1], y + at[0],
                         w.stride[0][1]);
  });
}

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    backward_kernel(SoftmaxKind kind, CellWalk<3> w, T* dx, const T* y,
                    const T* dy) {
  const std::int64_t per = w.per_sample();
  for_each_element(w.cells(), [&](std::int64_t e) {
    std::int64_t at[3];
    w.offsets(e / per, e % per, at);
    softmax_cell_backward(kind, w.channels, y + at[1], w.stride[1][1],
                          dy + at[2], w.stride[2][1], dx + at[0],
                          w.stride[0][1]);
  });
}

}  // namespace

template <typename T>
void launch_softmax_forward(SoftmaxKind kind, const CellWalk<2>& walk, T* y,
                            const T* x, CUstream_st* stream) {
  const std::int64_t n = walk.cells();
  if (n == 0) return;
  forward_kernel<T><<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      kind, walk, y, x);
  internal::check_cuda(cudaGetLastError(), "the GPU softmax launch");
}

template <typename T>
void launch_softmax_backward(SoftmaxKind kind, const CellWalk<3>& walk, T* dx,
                             const T* y, const T* dy, CUstream_st* stream) {
  const std::int64_t n = walk.cells();
  if (n == 0) return;
  backward_kernel<T><<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      kind, walk, dx, y, dy);
  internal::check_cuda(cudaGetLastError(), "the GPU softmax backward launch");
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template void launch_softmax_forward<T>(SoftmaxKind, const CellWalk<2>&, T*, \
                                          const T*, CUstream_st*);             \
  template void launch_softmax_backward<T>(                                    \
      SoftmaxKind, const CellWalk<3>&, T*, const T*, const T*, CUstream_st*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
