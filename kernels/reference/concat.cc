#include "kernels/reference/concat.h"

#include <algorithm>

#include "distconv/element_types.h"
#include "distconv/error.h"

namespace distconv::reference {
namespace {

void check_range(const Shape& shape, Index c_begin, Index c_end) {
  require(shape.ndims() >= 2, ErrorKind::kShapeMismatch, "shape ", shape,
          " has no channel dimension");
  require(0 <= c_begin && c_begin <= c_end && c_end <= shape[1],
          ErrorKind::kInvalidArgument, "channel range [", c_begin, ", ",
          c_end, ") outside [0, ", shape[1], ")");
}

// Calls fn(src offset, dst offset, count) for each sample: `count`
// consecutive elements (channels [c_begin, c_end) times the spatial
// volume) of a (N, C, spatial...) array and of its slice.
template <typename Fn>
void for_each_sample_block(const Shape& shape, Index c_begin, Index c_end,
                           Fn fn) {
  Index plane = 1;
  for (int d = 2; d < shape.ndims(); ++d) plane *= shape[d];
  const Index count = (c_end - c_begin) * plane;
  for (Index n = 0; n < shape[0]; ++n) {
    fn((n * shape[1] + c_begin) * plane, n * count, count);
  }
}

}  // namespace

template <typename T>
void concat_channels(const std::vector<Shape>& src_shapes,
                     const std::vector<const T*>& srcs, T* dst) {
  require(!src_shapes.empty() && src_shapes.size() == srcs.size(),
          ErrorKind::kInvalidArgument, src_shapes.size(), " shapes for ",
          srcs.size(), " inputs");
  Shape out = src_shapes[0];
  check_range(out, 0, 0);
  out[1] = 0;
  for (const Shape& s : src_shapes) {
    bool same = s.ndims() == out.ndims();
    for (int d = 0; same && d < s.ndims(); ++d) same = d == 1 || s[d] == out[d];
    require(same, ErrorKind::kShapeMismatch, "input ", s, " does not match ",
            src_shapes[0], " outside the channel dimension");
    out[1] += s[1];
  }
  Index c0 = 0;
  for (size_t i = 0; i < srcs.size(); ++i) {
    const Index c1 = c0 + src_shapes[i][1];
    for_each_sample_block(out, c0, c1, [&](Index in_out, Index in_src, Index k) {
      std::copy(srcs[i] + in_src, srcs[i] + in_src + k, dst + in_out);
    });
    c0 = c1;
  }
}

template <typename T>
void slice_channels(const Shape& src_shape, Index c_begin, Index c_end,
                    const T* src, T* dst) {
  check_range(src_shape, c_begin, c_end);
  for_each_sample_block(src_shape, c_begin, c_end,
                        [&](Index in_src, Index in_dst, Index k) {
                          std::copy(src + in_src, src + in_src + k,
                                    dst + in_dst);
                        });
}

template <typename T>
void unslice_channels(const Shape& src_shape, Index c_begin, Index c_end,
                      const T* diff_dst, T* diff_src) {
  check_range(src_shape, c_begin, c_end);
  std::fill(diff_src, diff_src + src_shape.volume(), T(0));
  for_each_sample_block(src_shape, c_begin, c_end,
                        [&](Index in_src, Index in_dst, Index k) {
                          std::copy(diff_dst + in_dst, diff_dst + in_dst + k,
                                    diff_src + in_src);
                        });
}

#define DISTCONV_INSTANTIATE(T)                                            \
  template void concat_channels<T>(const std::vector<Shape>&,              \
                                   const std::vector<const T*>&, T*);      \
  template void slice_channels<T>(const Shape&, Index, Index, const T*,    \
                                  T*);                                     \
  template void unslice_channels<T>(const Shape&, Index, Index, const T*,  \
                                    T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
