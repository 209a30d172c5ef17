// Test helpers for the layers that act on shard interiors (activation,
// add, concat/slice, upsample): layouts with halos around a distribution,
// sentinels in halo cells, and gathering shards to rank 0.
#ifndef DISTCONV_TESTS_SHARD_TESTING_H_
#define DISTCONV_TESTS_SHARD_TESTING_H_

#include <algorithm>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/halo_layout.h"
#include "distconv/scatter_gather.h"

namespace distconv::testing {

// `dist` with `width` halo cells on both sides of every spatial dimension
// (at most the extent there), stored in `order`.
inline HaloLayout with_halos(const Distribution& dist, Index width,
                             StorageOrder order = StorageOrder::kChannelsLast) {
  Shape w = Shape::filled(dist.ndims(), 0);
  for (int d = 2; d < dist.ndims(); ++d) {
    w[d] = std::min(width, dist.global_shape()[d]);
  }
  return HaloLayout(dist, HaloWidths::symmetric(w)).with_storage(order);
}

// Sets every cell of the local buffer, shard and halos.
template <typename T>
void fill_buffer(DistTensor<T>& t, T value) {
  t.buffer().for_each([&](const Shape&, T& v) { v = value; });
}

// Whether every halo cell of this rank's buffer (outside the interior)
// holds `value`.
template <typename T>
bool halos_hold(const DistTensor<T>& t, T value) {
  const Box interior = t.layout().interior(t.part());
  bool ok = true;
  t.buffer().for_each([&](const Shape& i, const T& v) {
    if (!interior.contains(i) && v != value) ok = false;
  });
  return ok;
}

// The global tensor on rank 0 (empty elsewhere): scatter_gather.h's.
using distconv::gathered;

// A tensor of `layout` holding the global array `values` (read on rank 0).
template <typename T>
DistTensor<T> scattered(const ProcessGrid& grid, const HaloLayout& layout,
                        const std::vector<T>& values) {
  DistTensor<T> t(grid, layout);
  scatter(values.data(), t, 0);
  return t;
}

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_SHARD_TESTING_H_
