#include "kernels/cuda/activation_kernels.h"

#include "distconv/element_types.h"
#include "kernels/activation_ops.h"
#include "kernels/cuda/pointwise_kernel.h"

namespace distconv {

using internal::launch_pointwise;

template <typename T>
void launch_activation_forward(const ActivationDesc& desc,
                               const internal::PointwiseDims<2>& dims, T* dst,
                               const T* src, CUstream_st* stream) {
  if (desc.kind == ActivationKind::kRelu) {
    launch_pointwise(dims, ReluForward<T>{}, stream, "relu", dst, src);
  } else {
    launch_pointwise(
        dims,
        LeakyReluForward<T, Compute<T>>{
            static_cast<Compute<T>>(desc.negative_slope)},
        stream, "leaky relu", dst, src);
  }
}

template <typename T>
void launch_activation_backward(const ActivationDesc& desc,
                                const internal::PointwiseDims<3>& dims,
                                T* diff_src, const T* sign_of,
                                const T* diff_dst, CUstream_st* stream) {
  if (desc.kind == ActivationKind::kRelu) {
    launch_pointwise(dims, ReluBackward<T>{}, stream, "relu backward",
                     diff_src, sign_of, diff_dst);
  } else {
    launch_pointwise(
        dims,
        LeakyReluBackward<T, Compute<T>>{
            static_cast<Compute<T>>(desc.negative_slope)},
        stream, "leaky relu backward", diff_src, sign_of, diff_dst);
  }
}

#define DISTCONV_INSTANTIATE(T)                                               \
  template void launch_activation_forward<T>(                                 \
      const ActivationDesc&, const internal::PointwiseDims<2>&, T*, const T*, \
      CUstream_st*);                                                          \
  template void launch_activation_backward<T>(                                \
      const ActivationDesc&, const internal::PointwiseDims<3>&, T*, const T*, \
      const T*, CUstream_st*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
