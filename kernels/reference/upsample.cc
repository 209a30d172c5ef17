#include "kernels/reference/upsample.h"

#include <algorithm>

#include "distconv/element_types.h"

namespace distconv::reference {
namespace {

// Calls fn(dst offset, src offset) for every output in row-major order.
template <typename Fn>
void for_each_output(const UpsampleDesc& desc, const Shape& src_shape,
                     Fn fn) {
  const Shape dst_shape = desc.dst_shape(src_shape);
  for (Index o = 0; o < dst_shape.volume(); ++o) {
    Shape i = unravel(o, dst_shape);
    for (int d = 0; d < desc.spatial_dims(); ++d) i[d + 2] /= desc.factors[d];
    fn(o, linear_index(i, src_shape));
  }
}

}  // namespace

template <typename T>
void upsample_fwd(const UpsampleDesc& desc, const Shape& src_shape,
                  const T* src, T* dst) {
  for_each_output(desc, src_shape, [&](Index o, Index i) { dst[o] = src[i]; });
}

template <typename T>
void upsample_bwd(const UpsampleDesc& desc, const Shape& src_shape,
                  const T* diff_dst, T* diff_src) {
  desc.validate(src_shape);
  std::fill(diff_src, diff_src + src_shape.volume(), T(0));
  for_each_output(desc, src_shape,
                  [&](Index o, Index i) { diff_src[i] += diff_dst[o]; });
}

#define DISTCONV_INSTANTIATE(T)                                              \
  template void upsample_fwd<T>(const UpsampleDesc&, const Shape&, const T*, \
                                T*);                                         \
  template void upsample_bwd<T>(const UpsampleDesc&, const Shape&, const T*, \
                                T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
