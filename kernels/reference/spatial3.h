// The spatial part of a window operation (convolution or pooling) as the
// reference loops walk it: every extent padded to 3 dimensions with 1s in
// front, so 2D runs as 3D with depth 1.
#ifndef DISTCONV_KERNELS_REFERENCE_SPATIAL3_H_
#define DISTCONV_KERNELS_REFERENCE_SPATIAL3_H_

#include "distconv/conv_desc.h"
#include "distconv/shape.h"

namespace distconv::reference {

struct Spatial3 {
  Index in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, ker[3] = {1, 1, 1};
  Index str[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  bool wrap[3] = {false, false, false};  // circular padding

  // Input position i of dimension e, wrapped into the input where the
  // padding is circular; -1 where it lies in zero padding.
  Index at(int e, Index i) const {
    if (wrap[e]) return ((i % in[e]) + in[e]) % in[e];
    return i >= 0 && i < in[e] ? i : -1;
  }

  Index in_volume() const { return in[0] * in[1] * in[2]; }
  Index out_volume() const { return out[0] * out[1] * out[2]; }
  Index ker_volume() const { return ker[0] * ker[1] * ker[2]; }
};

// `pad` is the lower padding; shapes are (N, C, spatial...).
inline Spatial3 spatial3(const ConvDesc& desc, const Shape& src_shape,
                         const Shape& dst_shape) {
  Spatial3 s;
  const int k = desc.spatial_dims();
  for (int d = 0; d < k; ++d) {
    const int e = 3 - k + d;
    s.in[e] = src_shape[d + 2];
    s.out[e] = dst_shape[d + 2];
    s.ker[e] = desc.kernel[d];
    s.str[e] = desc.stride[d];
    s.dil[e] = desc.dilation[d];
    s.pad[e] = desc.padding_lower[d];
    s.wrap[e] = desc.circular(d);
  }
  return s;
}

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_SPATIAL3_H_
