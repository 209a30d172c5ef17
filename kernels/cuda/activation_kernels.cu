#include "kernels/cuda/activation_kernels.h"

#include "kernels/activation_ops.h"
#include "kernels/cuda/pointwise_kernel.h"

namespace distconv {

using internal::launch_pointwise;

template <typename T>
void launch_activation_forward(const ActivationDesc& desc,
                               const PointwiseDims<2>& dims, T* dst,
                               const T* src, CUstream_st* stream) {
  if (desc.kind == ActivationKind::kRelu) {
    launch_pointwise(dims, ReluForward<T>{}, stream, "relu", dst, src);
  } else {
    launch_pointwise(
        dims, LeakyReluForward<T, T>{static_cast<T>(desc.negative_slope)},
        stream, "leaky relu", dst, src);
  }
}

template <typename T>
void launch_activation_backward(const ActivationDesc& desc,
                                const PointwiseDims<3>& dims, T* diff_src,
                                const T* sign_of, const T* diff_dst,
                                CUstream_st* stream) {
  if (desc.kind == ActivationKind::kRelu) {
    launch_pointwise(dims, ReluBackward<T>{}, stream, "relu backward",
                     diff_src, sign_of, diff_dst);
  } else {
    launch_pointwise(
        dims, LeakyReluBackward<T, T>{static_cast<T>(desc.negative_slope)},
        stream, "leaky relu backward", diff_src, sign_of, diff_dst);
  }
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
