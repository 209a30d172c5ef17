// Test helpers for the local kernels: views embedded in larger
// channels-last buffers (as a rank's shard sits inside its halos), and
// dense copies of views.
#ifndef DISTCONV_KERNELS_VIEW_TESTING_H_
#define DISTCONV_KERNELS_VIEW_TESTING_H_

#include <random>
#include <vector>

#include "distconv/halo_layout.h"
#include "distconv/strided_view.h"
#include "kernels/local_conv.h"

namespace distconv::testing {

// A view of `extent` inside a larger buffer stored in `order` (or exactly
// dense), with the buffer behind it.
template <typename T>
struct Embedded {
  std::vector<T> buffer;
  StridedView<T> view{nullptr, Shape{}, Shape{}};
};

template <typename T>
Embedded<T> embed(const Shape& extent, std::mt19937_64& rng, bool dense,
                  StorageOrder order = StorageOrder::kChannelsLast) {
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  const int n = extent.ndims();
  Shape outer = extent, offset = Shape::filled(n, 0);
  if (!dense) {
    for (int d = 0; d < n; ++d) {
      if (d == 1) continue;  // channels stay whole (what the layer does)
      offset[d] = u(0, 1);
      outer[d] = extent[d] + offset[d] + u(0, 1);
    }
  }
  const Shape strides = dense_strides(outer, order);
  Embedded<T> e;
  e.buffer.assign(outer.volume(), T(-7));
  e.view = StridedView<T>(e.buffer.data(), outer, strides)
               .subview(Box{offset, extent});
  return e;
}

template <typename T>
std::vector<T> dense_of(StridedView<T> v) {
  std::vector<T> out(v.size());
  copy_view<T>(v, StridedView<T>::contiguous(out.data(), v.extent()));
  return out;
}

}  // namespace distconv::testing

#endif  // DISTCONV_KERNELS_VIEW_TESTING_H_
