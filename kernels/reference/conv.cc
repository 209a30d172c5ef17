#include "kernels/reference/conv.h"

#include <algorithm>
#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/reference/spatial3.h"

namespace distconv::reference {
namespace {

void check_shapes(const ConvDesc& desc, const Shape& src_shape,
                  const Shape& dst_shape) {
  const Shape expected = desc.dst_shape(src_shape);
  require(dst_shape == expected, ErrorKind::kShapeMismatch, "output shape ",
          dst_shape, " does not match ", expected, " computed from input ",
          src_shape);
}

// Calls tap(src offset, weights offset, dst offset) for every product of
// the convolution: output point o of filter f in sample n reads input
// channel c of f's group at position o * stride - padding_lower + k *
// dilation for each kernel tap k that lands inside the input, or, where
// the padding is circular, at that position wrapped into the input.
template <typename Tap>
void for_each_tap(const ConvDesc& desc, const Shape& src_shape,
                  const Shape& dst_shape, Tap tap) {
  const Index cg = desc.in_channels / desc.groups;
  const Index fg = desc.out_channels / desc.groups;
  const Spatial3 sp = spatial3(desc, src_shape, dst_shape);
  const auto& [in, out, ker, str, dil, pad, wrap] = sp;
  (void)wrap;  // sp.at wraps
  const Index in_volume = sp.in_volume();
  const Index out_volume = sp.out_volume();
  const Index ker_volume = sp.ker_volume();
  for (Index n = 0; n < src_shape[0]; ++n) {
    for (Index f = 0; f < desc.out_channels; ++f) {
      const Index g = f / fg;
      for (Index c = 0; c < cg; ++c) {
        const Index src_base = (n * desc.in_channels + g * cg + c) * in_volume;
        const Index w_base = (f * cg + c) * ker_volume;
        const Index dst_base = (n * desc.out_channels + f) * out_volume;
        for (Index o0 = 0; o0 < out[0]; ++o0)
        for (Index o1 = 0; o1 < out[1]; ++o1)
        for (Index o2 = 0; o2 < out[2]; ++o2)
        for (Index k0 = 0; k0 < ker[0]; ++k0)
        for (Index k1 = 0; k1 < ker[1]; ++k1)
        for (Index k2 = 0; k2 < ker[2]; ++k2) {
          const Index i0 = sp.at(0, o0 * str[0] - pad[0] + k0 * dil[0]);
          const Index i1 = sp.at(1, o1 * str[1] - pad[1] + k1 * dil[1]);
          const Index i2 = sp.at(2, o2 * str[2] - pad[2] + k2 * dil[2]);
          if (i0 < 0 || i1 < 0 || i2 < 0) continue;
          tap(src_base + (i0 * in[1] + i1) * in[2] + i2,
              w_base + (k0 * ker[1] + k1) * ker[2] + k2,
              dst_base + (o0 * out[1] + o1) * out[2] + o2);
        }
      }
    }
  }
}

template <typename T>
void fwd(const ConvDesc& desc, const Shape& src_shape, const T* src,
              const T* weights, const T* bias, const Shape& dst_shape,
              T* dst) {
  check_shapes(desc, src_shape, dst_shape);
  require(desc.bias == ConvBias::kNone || bias != nullptr,
          ErrorKind::kInvalidArgument,
          "the convolution adds a bias but no bias was given");
  const Index plane = dst_shape.volume() /
                      std::max<Index>(1, dst_shape[0] * dst_shape[1]);
  for (Index i = 0; i < dst_shape.volume(); ++i) {
    const Index f = plane == 0 ? 0 : (i / plane) % dst_shape[1];
    dst[i] = desc.bias == ConvBias::kAdd ? bias[f] : T(0);
  }
  for_each_tap(desc, src_shape, dst_shape, [&](Index s, Index w, Index d) {
    dst[d] += src[s] * weights[w];
  });
}

template <typename T>
void bwd_data(const ConvDesc& desc, const Shape& dst_shape,
                   const T* diff_dst, const T* weights,
                   const Shape& src_shape, T* diff_src) {
  check_shapes(desc, src_shape, dst_shape);
  std::fill(diff_src, diff_src + src_shape.volume(), T(0));
  for_each_tap(desc, src_shape, dst_shape, [&](Index s, Index w, Index d) {
    diff_src[s] += diff_dst[d] * weights[w];
  });
}

template <typename T>
void bwd_weights(const ConvDesc& desc, const Shape& src_shape,
                      const T* src, const Shape& dst_shape, const T* diff_dst,
                      T* diff_weights, T* diff_bias) {
  check_shapes(desc, src_shape, dst_shape);
  require(desc.bias == ConvBias::kNone || diff_bias != nullptr,
          ErrorKind::kInvalidArgument,
          "the convolution adds a bias but no bias gradient was given");
  const Shape wshape = desc.weights_shape();
  std::fill(diff_weights, diff_weights + wshape.volume(), T(0));
  for_each_tap(desc, src_shape, dst_shape, [&](Index s, Index w, Index d) {
    diff_weights[w] += src[s] * diff_dst[d];
  });
  if (desc.bias == ConvBias::kNone) return;
  const Index plane = dst_shape.volume() /
                      std::max<Index>(1, dst_shape[0] * dst_shape[1]);
  std::fill(diff_bias, diff_bias + desc.out_channels, T(0));
  for (Index i = 0; i < dst_shape.volume(); ++i) {
    diff_bias[(i / plane) % dst_shape[1]] += diff_dst[i];
  }
}

}  // namespace

#define DISTCONV_DEFINE(T)                                                    \
  void conv_fwd(const ConvDesc& desc, const Shape& src_shape, const T* src,   \
                const T* weights, const T* bias, const Shape& dst_shape,      \
                T* dst) {                                                     \
    fwd(desc, src_shape, src, weights, bias, dst_shape, dst);                 \
  }                                                                           \
  void conv_bwd_data(const ConvDesc& desc, const Shape& dst_shape,            \
                     const T* diff_dst, const T* weights,                     \
                     const Shape& src_shape, T* diff_src) {                   \
    bwd_data(desc, dst_shape, diff_dst, weights, src_shape, diff_src);        \
  }                                                                           \
  void conv_bwd_weights(const ConvDesc& desc, const Shape& src_shape,         \
                        const T* src, const Shape& dst_shape,                 \
                        const T* diff_dst, T* diff_weights, T* diff_bias) {   \
    bwd_weights(desc, src_shape, src, dst_shape, diff_dst, diff_weights,      \
                diff_bias);                                                   \
  }
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_DEFINE)
#undef DISTCONV_DEFINE

}  // namespace distconv::reference
