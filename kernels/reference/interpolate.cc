#include "kernels/reference/interpolate.h"

#include <vector>

#include "distconv/element_types.h"

namespace distconv::reference {
namespace {

// fn(output offset, input offset, weight) for each of every output cell's
// 2^k corners, outputs in row-major order.
template <typename Fn>
void each_corner(const InterpolateDesc& desc, const Shape& src_shape, Fn fn) {
  const Shape dst_shape = desc.dst_shape(src_shape);
  const int k = desc.spatial_dims();
  for (Index o = 0; o < dst_shape.volume(); ++o) {
    const Shape i = unravel(o, dst_shape);
    for (int mask = 0; mask < (1 << k); ++mask) {
      Shape at = i;
      double w = 1;
      for (int d = 0; d < k; ++d) {
        const LinearTap t = desc.tap(d, src_shape[d + 2], i[d + 2]);
        const bool hi = (mask >> d) & 1;
        at[d + 2] = hi ? t.i1 : t.i0;
        w *= hi ? t.w1 : t.w0;
      }
      fn(o, linear_index(at, src_shape), w);
    }
  }
}

}  // namespace

template <typename T>
void interpolate_fwd(const InterpolateDesc& desc, const Shape& src_shape,
                     const T* src, T* dst) {
  std::vector<double> y(static_cast<size_t>(desc.dst_shape(src_shape).volume()),
                        0.0);
  each_corner(desc, src_shape, [&](Index o, Index i, double w) {
    y[o] += w * static_cast<double>(src[i]);
  });
  for (size_t j = 0; j < y.size(); ++j) dst[j] = static_cast<T>(y[j]);
}

template <typename T>
void interpolate_bwd(const InterpolateDesc& desc, const Shape& src_shape,
                     const T* diff_dst, T* diff_src) {
  std::vector<double> dx(static_cast<size_t>(src_shape.volume()), 0.0);
  each_corner(desc, src_shape, [&](Index o, Index i, double w) {
    dx[i] += w * static_cast<double>(diff_dst[o]);
  });
  for (size_t j = 0; j < dx.size(); ++j) diff_src[j] = static_cast<T>(dx[j]);
}

#define DISTCONV_INSTANTIATE(T)                                          \
  template void interpolate_fwd<T>(const InterpolateDesc&, const Shape&, \
                                   const T*, T*);                        \
  template void interpolate_bwd<T>(const InterpolateDesc&, const Shape&, \
                                   const T*, T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
