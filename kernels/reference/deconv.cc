#include "kernels/reference/deconv.h"

#include <algorithm>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/reference/conv.h"

namespace distconv::reference {
namespace {

void check_shapes(const DeconvDesc& d, const Shape& src, const Shape& dst) {
  require(d.dst_shape(src) == dst, ErrorKind::kShapeMismatch,
          "transposed convolution output ", dst, " does not match input ", src,
          " (expected ", d.dst_shape(src), ")");
}

// Channel of element i of a dense (N, C, spatial...) array.
Index channel_of(const Shape& shape, Index i) {
  const Index cell = shape.volume() / (shape[0] * shape[1]);
  return (i / cell) % shape[1];
}

template <typename T>
void fwd(const DeconvDesc& d, const Shape& src_shape, const T* src,
         const T* weights, const T* bias, const Shape& dst_shape, T* dst) {
  check_shapes(d, src_shape, dst_shape);
  conv_bwd_data(d.adjoint(), src_shape, src, weights, dst_shape, dst);
  if (d.bias != ConvBias::kAdd) return;
  for (Index i = 0; i < dst_shape.volume(); ++i) {
    dst[i] += bias[channel_of(dst_shape, i)];
  }
}

template <typename T>
void bwd_data(const DeconvDesc& d, const Shape& dst_shape, const T* diff_dst,
              const T* weights, const Shape& src_shape, T* diff_src) {
  check_shapes(d, src_shape, dst_shape);
  conv_fwd(d.adjoint(), dst_shape, diff_dst, weights, nullptr, src_shape,
           diff_src);
}

template <typename T>
void bwd_weights(const DeconvDesc& d, const Shape& src_shape, const T* src,
                 const Shape& dst_shape, const T* diff_dst, T* diff_weights,
                 T* diff_bias) {
  check_shapes(d, src_shape, dst_shape);
  conv_bwd_weights(d.adjoint(), dst_shape, diff_dst, src_shape, src,
                   diff_weights, nullptr);
  if (d.bias != ConvBias::kAdd) return;
  std::fill(diff_bias, diff_bias + d.out_channels, T(0));
  for (Index i = 0; i < dst_shape.volume(); ++i) {
    diff_bias[channel_of(dst_shape, i)] += diff_dst[i];
  }
}

}  // namespace

#define DISTCONV_REFERENCE_DECONV(T)                                          \
  void deconv_fwd(const DeconvDesc& desc, const Shape& src_shape,             \
                  const T* src, const T* weights, const T* bias,              \
                  const Shape& dst_shape, T* dst) {                           \
    fwd(desc, src_shape, src, weights, bias, dst_shape, dst);                 \
  }                                                                           \
  void deconv_bwd_data(const DeconvDesc& desc, const Shape& dst_shape,        \
                       const T* diff_dst, const T* weights,                   \
                       const Shape& src_shape, T* diff_src) {                 \
    bwd_data(desc, dst_shape, diff_dst, weights, src_shape, diff_src);        \
  }                                                                           \
  void deconv_bwd_weights(const DeconvDesc& desc, const Shape& src_shape,     \
                          const T* src, const Shape& dst_shape,               \
                          const T* diff_dst, T* diff_weights, T* diff_bias) { \
    bwd_weights(desc, src_shape, src, dst_shape, diff_dst, diff_weights,      \
                diff_bias);                                                   \
  }
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_REFERENCE_DECONV)
#undef DISTCONV_REFERENCE_DECONV

}  // namespace distconv::reference
