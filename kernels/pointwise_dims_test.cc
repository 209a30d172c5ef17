// PointwiseDims (distconv/internal/pointwise_dims.h): every element of the
// extent visited once, with the offsets of one index in every view, for views
// inside larger channels-last and channels-first buffers and dense; dense views
// of one layout merge into a single dimension, and channels-last interiors keep
// C innermost.
#include "distconv/internal/pointwise_dims.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "kernels/view_testing.h"

namespace distconv {
namespace {

using internal::pointwise_dims;
using internal::pointwise_offsets;
using internal::PointwiseDims;

using Offsets = std::array<std::int64_t, 3>;

// Every index's offsets in the three views, from the strides directly.
std::vector<Offsets> by_index(const Shape& extent,
                              const std::array<Shape, 3>& strides) {
  std::vector<Offsets> out;
  if (extent.volume() == 0) return out;
  Shape i = Shape::filled(extent.ndims(), 0);
  while (true) {
    Offsets o{};
    for (int k = 0; k < 3; ++k) {
      for (int d = 0; d < extent.ndims(); ++d) o[k] += i[d] * strides[k][d];
    }
    out.push_back(o);
    int d = extent.ndims() - 1;
    for (; d >= 0; --d) {
      if (++i[d] < extent[d]) break;
      i[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

TEST(PointwiseDims, VisitsEveryElementOnceWithItsOffsetsInEveryView) {
  std::mt19937_64 rng(7);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(u(3, 5));
    Shape extent = Shape::filled(n, 0);
    for (int d = 0; d < n; ++d) extent[d] = u(trial % 17 == 0 ? 0 : 1, 4);
    std::array<Shape, 3> strides;
    for (int k = 0; k < 3; ++k) {
      const auto order = u(0, 1) ? StorageOrder::kChannelsLast
                                 : StorageOrder::kChannelsFirst;
      strides[k] = testing::embed<float>(extent, rng, u(0, 2) == 0, order)
                       .view.strides();
    }
    SCOPED_TRACE(::testing::Message() << "extent " << extent << " strides "
                                      << strides[0] << " " << strides[1]
                                      << " " << strides[2]);
    const PointwiseDims<3> d = pointwise_dims<3>(extent, strides);
    ASSERT_EQ(d.volume(), extent.volume());
    std::vector<Offsets> walked;
    for (std::int64_t e = 0; e < d.volume(); ++e) {
      Offsets o;
      pointwise_offsets(d, e, o.data());
      walked.push_back(o);
    }
    std::vector<Offsets> want = by_index(extent, strides);
    std::sort(walked.begin(), walked.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(walked, want);
  }
}

TEST(PointwiseDims, MergesWhatEveryViewAllows) {
  const Shape extent{2, 16, 5, 7};
  const Shape last = dense_strides(extent, StorageOrder::kChannelsLast);
  const Shape first = dense_strides(extent, StorageOrder::kChannelsFirst);
  const PointwiseDims<2> dense = pointwise_dims<2>(extent, {last, last});
  EXPECT_EQ(dense.count, 1);
  EXPECT_EQ(dense.extent[0], extent.volume());
  // A channels-last interior inside halos of one cell on each side of H
  // and W: runs of a W row's channels (7 x 16), then H, then N.
  const Shape outer{2, 16, 7, 9};
  const Shape haloed = dense_strides(outer, StorageOrder::kChannelsLast);
  const PointwiseDims<2> inner = pointwise_dims<2>(extent, {haloed, last});
  EXPECT_EQ(inner.count, 3);
  EXPECT_EQ(inner.extent[2], 7 * 16);
  EXPECT_EQ(inner.stride[0][2], 1);
  // Views of two storage orders: only H and W merge (contiguous in both).
  const PointwiseDims<2> mixed = pointwise_dims<2>(extent, {last, first});
  EXPECT_EQ(mixed.count, 3);
  EXPECT_EQ(mixed.extent[1], 5 * 7);
  EXPECT_EQ(mixed.extent[2], 16);
  const PointwiseDims<1> one = pointwise_dims<1>(Shape{1, 1, 1, 1}, {last});
  EXPECT_EQ(one.count, 1);
  EXPECT_EQ(one.volume(), 1);
  EXPECT_EQ(pointwise_dims<1>(Shape{1, 0, 3, 3}, {last}).volume(), 0);
}

}  // namespace
}  // namespace distconv
