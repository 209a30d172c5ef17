#include "kernels/reference/pool.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/reference/spatial3.h"

namespace distconv::reference {
namespace {

void check_shapes(const PoolDesc& desc, const Shape& src_shape,
                  const Shape& dst_shape) {
  const Shape expected = desc.dst_shape(src_shape);
  require(dst_shape == expected, ErrorKind::kShapeMismatch,
          "pooling output shape ", dst_shape, " does not match ", expected,
          " computed from input ", src_shape);
}

// Calls window(dst offset, cells, count, divisor) for every output, where
// cells[0..count) are the src offsets of its window's input cells in window
// order and divisor is what an average divides by.
template <typename Window>
void for_each_window(const PoolDesc& desc, const Shape& src_shape,
                     const Shape& dst_shape, Window window) {
  const Spatial3 sp =
      spatial3(desc.window_conv(src_shape[1]), src_shape, dst_shape);
  const auto& [in, out, ker, str, dil, pad, wrap] = sp;  // dilation 1
  (void)wrap;  // sp.at wraps
  const Index in_volume = sp.in_volume();
  const Index out_volume = sp.out_volume();
  const Index ker_volume = sp.ker_volume();
  std::vector<Index> cells(ker_volume);
  const Index planes = src_shape[0] * src_shape[1];
  for (Index p = 0; p < planes; ++p) {
    for (Index o0 = 0; o0 < out[0]; ++o0)
    for (Index o1 = 0; o1 < out[1]; ++o1)
    for (Index o2 = 0; o2 < out[2]; ++o2) {
      Index count = 0;
      for (Index k0 = 0; k0 < ker[0]; ++k0)
      for (Index k1 = 0; k1 < ker[1]; ++k1)
      for (Index k2 = 0; k2 < ker[2]; ++k2) {
        const Index i0 = sp.at(0, o0 * str[0] - pad[0] + k0);
        const Index i1 = sp.at(1, o1 * str[1] - pad[1] + k1);
        const Index i2 = sp.at(2, o2 * str[2] - pad[2] + k2);
        if (i0 < 0 || i1 < 0 || i2 < 0) continue;
        cells[count++] = p * in_volume + (i0 * in[1] + i1) * in[2] + i2;
      }
      const Index divisor =
          desc.kind == PoolKind::kAverageIncludePadding ? ker_volume : count;
      window(p * out_volume + (o0 * out[1] + o1) * out[2] + o2, cells.data(),
             count, divisor);
    }
  }
}

// PyTorch's choice: the window's first cell, replaced by any later cell
// holding a larger value or a NaN. So the first of equal largest values,
// the last NaN of a window holding some (its value NaN), and the first cell
// of a window of -Inf only.
template <typename T>
Index argmax(const T* src, const Index* cells, Index count) {
  Index best = cells[0];
  for (Index j = 1; j < count; ++j) {
    const T v = src[cells[j]];
    if (v > src[best] || std::isnan(v)) best = cells[j];
  }
  return best;
}

}  // namespace

template <typename T>
void pool_fwd(const PoolDesc& desc, const Shape& src_shape, const T* src,
              const Shape& dst_shape, T* dst) {
  check_shapes(desc, src_shape, dst_shape);
  for_each_window(desc, src_shape, dst_shape,
                  [&](Index o, const Index* cells, Index count, Index div) {
                    if (desc.kind == PoolKind::kMax) {
                      dst[o] = src[argmax(src, cells, count)];
                      return;
                    }
                    T sum = 0;
                    for (Index j = 0; j < count; ++j) sum += src[cells[j]];
                    dst[o] = sum / static_cast<T>(div);
                  });
}

template <typename T>
void pool_bwd(const PoolDesc& desc, const Shape& src_shape, const T* src,
              const Shape& dst_shape, const T* diff_dst, T* diff_src) {
  check_shapes(desc, src_shape, dst_shape);
  std::fill(diff_src, diff_src + src_shape.volume(), T(0));
  for_each_window(desc, src_shape, dst_shape,
                  [&](Index o, const Index* cells, Index count, Index div) {
                    if (desc.kind == PoolKind::kMax) {
                      diff_src[argmax(src, cells, count)] += diff_dst[o];
                      return;
                    }
                    const T share = diff_dst[o] / static_cast<T>(div);
                    for (Index j = 0; j < count; ++j) {
                      diff_src[cells[j]] += share;
                    }
                  });
}

#define DISTCONV_INSTANTIATE(T)                                      \
  template void pool_fwd<T>(const PoolDesc&, const Shape&, const T*, \
                            const Shape&, T*);                       \
  template void pool_bwd<T>(const PoolDesc&, const Shape&, const T*, \
                            const Shape&, const T*, T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
