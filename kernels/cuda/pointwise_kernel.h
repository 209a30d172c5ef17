// The CUDA kernel of every element-wise operation on strided views
// (activations, add, copies): one thread per element of a PointwiseDims
// walk, dst = op(src...). Included by .cu files only.
//
//   launch_pointwise<T>(dims, ReluForward<T>{}, stream, "relu", dst, src);
//
// No __restrict__: dst may be one of the sources, element for element (in
// place), not a partial overlap.
#ifndef DISTCONV_KERNELS_CUDA_POINTWISE_KERNEL_H_
#define DISTCONV_KERNELS_CUDA_POINTWISE_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "distconv/internal/cuda_check.h"
#include "distconv/internal/pointwise_dims.h"
#include "kernels/cuda/grid_stride.h"

namespace distconv::internal {

// dst at at[0] = op(each src at its at[i + 1]).
template <typename T, typename Op, std::size_t... I, typename... Src>
__device__ void apply_at(const Op& op, const std::int64_t* at,
                         std::index_sequence<I...>, T* dst,
                         const Src*... src) {
  dst[at[0]] = op(src[at[I + 1]]...);
}

template <typename T, typename Op, std::size_t K, typename... Src>
__global__ void __launch_bounds__(kThreadsPerBlock)
    pointwise_kernel(PointwiseDims<K> d, std::int64_t n, Op op, T* dst,
                     const Src*... src) {
  for_each_element(n, [&](std::int64_t e) {
    std::int64_t at[K];
    pointwise_offsets(d, e, at);
    apply_at(op, at, std::index_sequence_for<Src...>(), dst, src...);
  });
}

// dst = op(src...) over `dims` (views dst, src... in that order), queued
// on `stream`; throws Error(kDevice) naming `what` if the launch fails.
template <typename T, typename Op, std::size_t K, typename... Src>
void launch_pointwise(const PointwiseDims<K>& dims, Op op, CUstream_st* stream,
                      const char* what, T* dst, const Src*... src) {
  static_assert(K == 1 + sizeof...(Src), "one view per pointer");
  const std::int64_t n = dims.volume();
  if (n == 0) return;
  pointwise_kernel<T, Op, K, Src...>
      <<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(dims, n, op,
                                                               dst, src...);
  check_cuda(cudaGetLastError(), "the GPU ", what, " launch");
}

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_CUDA_POINTWISE_KERNEL_H_
