// UpsampleGeometry: a view of a tensor (N, C, spatial...) as nearest
// upsampling walks it, its 1 to 3 spatial dimensions padded to three
// (leading extents of 1, strides 0), plus the factors padded alike. Pure,
// header only; the host loops (kernels/local_upsample.cc) and the CUDA kernels
// (kernels/cuda/upsample_kernels.h) index with it.
//
//   UpsampleGeometry g = upsample_geometry(view.extent(), view.strides());
//   g.offset(n, c, i0, i1, i2);   // the element's offset from the first
#ifndef DISTCONV_KERNELS_UPSAMPLE_GEOMETRY_H_
#define DISTCONV_KERNELS_UPSAMPLE_GEOMETRY_H_

#include <cstdint>

#include "distconv/internal/host_device.h"
#include "distconv/shape.h"

namespace distconv {

struct UpsampleGeometry {
  std::int64_t n = 0, c = 0, s[3] = {1, 1, 1};
  std::int64_t stride_n = 0, stride_c = 0, stride_s[3] = {0, 0, 0};

  DISTCONV_HOST_DEVICE std::int64_t offset(std::int64_t in, std::int64_t ic,
                                           std::int64_t i0, std::int64_t i1,
                                           std::int64_t i2) const {
    return in * stride_n + ic * stride_c + i0 * stride_s[0] +
           i1 * stride_s[1] + i2 * stride_s[2];
  }
  DISTCONV_HOST_DEVICE std::int64_t volume() const {
    return n * c * s[0] * s[1] * s[2];
  }
};

// Of a view with this extent and these strides (N, C, 1 to 3 spatial).
inline UpsampleGeometry upsample_geometry(const Shape& extent,
                                          const Shape& strides) {
  UpsampleGeometry g;
  g.n = extent[0];
  g.c = extent[1];
  g.stride_n = strides[0];
  g.stride_c = strides[1];
  const int k = extent.ndims() - 2;
  for (int d = 0; d < 3; ++d) {
    const int from = d - (3 - k);
    g.s[d] = from >= 0 ? extent[from + 2] : 1;
    g.stride_s[d] = from >= 0 ? strides[from + 2] : 0;
  }
  return g;
}

// The factors (one per spatial dimension) padded to three with ones.
struct UpsampleFactors {
  std::int64_t f[3] = {1, 1, 1};
};

inline UpsampleFactors upsample_factors(const Shape& factors) {
  UpsampleFactors out;
  const int k = factors.ndims();
  for (int d = 3 - k; d < 3; ++d) out.f[d] = factors[d - (3 - k)];
  return out;
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_UPSAMPLE_GEOMETRY_H_
