// Reference convolution kernels: plain loops, the oracle every distributed
// and backend convolution is tested against. 2D and 3D, any stride,
// dilation, asymmetric padding (zeros or circular) and groups; float and
// double.
//
// Arrays are dense row-major: src (N, C, spatial...), dst (N, F, spatial'),
// weights (F, C / groups, k...), bias (F). Shapes are checked with
// ConvDesc::validate and against each other; outputs are overwritten.
//
//   ConvDesc conv = ConvDesc::make(1, 1, {2, 2});
//   const Shape x{1, 1, 3, 3}, y = conv.dst_shape(x);     // {1, 1, 2, 2}
//   reference::conv_fwd(conv, x, src, weights, /*bias=*/nullptr, y, dst);
#ifndef DISTCONV_KERNELS_REFERENCE_CONV_H_
#define DISTCONV_KERNELS_REFERENCE_CONV_H_

#include "distconv/conv_desc.h"
#include "distconv/element_types.h"
#include "distconv/shape.h"

namespace distconv::reference {

// Each is declared for float and for double (plain overloads, so that a
// null bias or diff_bias needs no cast).
#define DISTCONV_REFERENCE_CONV(T)                                           \
  /* dst = conv(src, weights) (+ bias when desc.bias == kAdd). */            \
  void conv_fwd(const ConvDesc& desc, const Shape& src_shape, const T* src,  \
                const T* weights, const T* bias, const Shape& dst_shape,     \
                T* dst);                                                     \
  /* diff_src = the adjoint of conv_fwd in src, applied to diff_dst. */      \
  void conv_bwd_data(const ConvDesc& desc, const Shape& dst_shape,           \
                     const T* diff_dst, const T* weights,                    \
                     const Shape& src_shape, T* diff_src);                   \
  /* diff_weights = the adjoint of conv_fwd in weights; diff_bias (when   */ \
  /* desc.bias == kAdd) = diff_dst summed over samples and space.         */ \
  void conv_bwd_weights(const ConvDesc& desc, const Shape& src_shape,        \
                        const T* src, const Shape& dst_shape,                \
                        const T* diff_dst, T* diff_weights, T* diff_bias);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_REFERENCE_CONV)
#undef DISTCONV_REFERENCE_CONV

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_CONV_H_
