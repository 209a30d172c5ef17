#include "kernels/cuda/activation_kernels.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/activation_ops.h"

namespace distconv {
namespace {

using internal::for_each_element;
using internal::grid_stride_blocks;
using internal::kThreadsPerBlock;

// No __restrict__: dst may be an input, element for element.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreadsPerBlock)
    unary_kernel(PointwiseDims<2> d, std::int64_t n, Op op, T* dst,
                 const T* src) {
  for_each_element(n, [&](std::int64_t e) {
    std::int64_t at[2];
    pointwise_offsets(d, e, at);
    dst[at[0]] = op(src[at[1]]);
  });
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kThreadsPerBlock)
    binary_kernel(PointwiseDims<3> d, std::int64_t n, Op op, T* dst,
                  const T* a, const T* b) {
  for_each_element(n, [&](std::int64_t e) {
    std::int64_t at[3];
    pointwise_offsets(d, e, at);
    dst[at[0]] = op(a[at[1]], b[at[2]]);
  });
}

}  // namespace

template <typename T>
void launch_activation_forward(const ActivationDesc& desc,
                               const PointwiseDims<2>& dims, T* dst,
                               const T* src, CUstream_st* stream) {
  const std::int64_t n = dims.volume();
  if (n == 0) return;
  if (desc.kind == ActivationKind::kRelu) {
    unary_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
        dims, n, ReluForward<T>{}, dst, src);
  } else {
    unary_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
        dims, n, LeakyReluForward<T, T>{static_cast<T>(desc.negative_slope)},
        dst, src);
  }
  internal::check_cuda(cudaGetLastError(), "the GPU activation launch");
}

template <typename T>
void launch_activation_backward(const ActivationDesc& desc,
                                const PointwiseDims<3>& dims, T* diff_src,
                                const T* sign_of, const T* diff_dst,
                                CUstream_st* stream) {
  const std::int64_t n = dims.volume();
  if (n == 0) return;
  if (desc.kind == ActivationKind::kRelu) {
    binary_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
        dims, n, ReluBackward<T>{}, diff_src, sign_of, diff_dst);
  } else {
    binary_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
        dims, n,
        LeakyReluBackward<T, T>{static_cast<T>(desc.negative_slope)},
        diff_src, sign_of, diff_dst);
  }
  internal::check_cuda(cudaGetLastError(),
                       "the GPU activation backward launch");
}

template void launch_activation_forward<float>(const ActivationDesc&,
                                               const PointwiseDims<2>&,
                                               float*, const float*,
                                               CUstream_st*);
template void launch_activation_forward<double>(const ActivationDesc&,
                                                const PointwiseDims<2>&,
                                                double*, const double*,
                                                CUstream_st*);
template void launch_activation_backward<float>(const ActivationDesc&,
                                                const PointwiseDims<3>&,
                                                float*, const float*,
                                                const float*, CUstream_st*);
template void launch_activation_backward<double>(const ActivationDesc&,
                                                 const PointwiseDims<3>&,
                                                 double*, const double*,
                                                 const double*, CUstream_st*);

}  // namespace distconv
