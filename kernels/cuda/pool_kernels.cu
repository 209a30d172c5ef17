#include "kernels/cuda/pool_kernels.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/grid_stride.h"

namespace distconv {
namespace {

using internal::for_each_element;
using internal::grid_stride_blocks;
using internal::kThreadsPerBlock;

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    forward_kernel(PoolWindow w, const T* __restrict__ src,
                   T* __restrict__ dst, std::int64_t cells) {
  for_each_element(cells, [&](std::int64_t k) {
    pool_forward_cell<T, Compute<T>>(w, src, dst, k);
  });
}

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    backward_kernel(PoolWindow w, const T* __restrict__ src,
                    const T* __restrict__ diff_dst, T* __restrict__ diff_src,
                    std::int64_t cells) {
  for_each_element(cells, [&](std::int64_t k) {
    pool_backward_cell<T, Compute<T>>(w, src, diff_dst, diff_src, k);
  });
}

}  // namespace

template <typename T>
void launch_pool_forward(const PoolWindow& w, const T* src, T* dst,
                         CUstream_st* stream) {
  const std::int64_t cells = w.outputs();
  if (cells == 0) return;
  forward_kernel<T><<<grid_stride_blocks(cells), kThreadsPerBlock, 0,
                      stream>>>(w, src, dst, cells);
  internal::check_cuda(cudaGetLastError(), "the GPU pooling forward launch");
}

template <typename T>
void launch_pool_backward(const PoolWindow& w, const T* src,
                          const T* diff_dst, T* diff_src,
                          CUstream_st* stream) {
  const std::int64_t cells = w.inputs();
  if (cells == 0) return;
  backward_kernel<T><<<grid_stride_blocks(cells), kThreadsPerBlock, 0,
                       stream>>>(w, src, diff_dst, diff_src, cells);
  internal::check_cuda(cudaGetLastError(), "the GPU pooling backward launch");
}

#define DISTCONV_INSTANTIATE(T)                                               \
  template void launch_pool_forward<T>(const PoolWindow&, const T*, T*,       \
                                       CUstream_st*);                         \
  template void launch_pool_backward<T>(const PoolWindow&, const T*,          \
                                        const T*, T*, CUstream_st*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
