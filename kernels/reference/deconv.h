// Reference transposed-convolution kernels: the adjoint convolution's
// reference passes (DeconvDesc::adjoint) plus the bias, the oracle of the
// distributed transposed convolution. 2D and 3D; float and double.
//
// Arrays are dense row-major: src (N, in_channels, spatial...), dst (N,
// out_channels, spatial'), weights (in_channels, out_channels / groups,
// k...), bias (out_channels). Outputs are overwritten.
//
//   DeconvDesc up = DeconvDesc::make(1, 1, {1, 2});
//   up.stride = {2, 2};
//   const Shape x{1, 1, 1, 2}, y = up.dst_shape(x);        // {1, 1, 1, 4}
//   reference::deconv_fwd(up, x, src, weights, nullptr, y, dst);
#ifndef DISTCONV_KERNELS_REFERENCE_DECONV_H_
#define DISTCONV_KERNELS_REFERENCE_DECONV_H_

#include "distconv/deconv_desc.h"
#include "distconv/element_types.h"
#include "distconv/shape.h"

namespace distconv::reference {

#define DISTCONV_REFERENCE_DECONV(T)                                         \
  /* dst = deconv(src, weights) (+ bias when desc.bias == kAdd). */          \
  void deconv_fwd(const DeconvDesc& desc, const Shape& src_shape,            \
                  const T* src, const T* weights, const T* bias,             \
                  const Shape& dst_shape, T* dst);                           \
  /* diff_src = the adjoint of deconv_fwd in src, applied to diff_dst. */    \
  void deconv_bwd_data(const DeconvDesc& desc, const Shape& dst_shape,       \
                       const T* diff_dst, const T* weights,                  \
                       const Shape& src_shape, T* diff_src);                 \
  /* diff_weights = the adjoint of deconv_fwd in weights; diff_bias (when */ \
  /* desc.bias == kAdd) = diff_dst summed over samples and space.         */ \
  void deconv_bwd_weights(const DeconvDesc& desc, const Shape& src_shape,    \
                          const T* src, const Shape& dst_shape,              \
                          const T* diff_dst, T* diff_weights, T* diff_bias);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_REFERENCE_DECONV)
#undef DISTCONV_REFERENCE_DECONV

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_DECONV_H_
