// CellWalk (kernels/channel_cells.h), the cells the GPU softmax and loss
// kernels walk: every cell of views of 1 to 3 spatial dimensions, in
// sample-major, row-major order, at each view's offset of channel 0; an
// empty extent (samples, channels or space) has no cell. The cell
// functions themselves are the host layers' code, tested against the
// reference by layers/softmax_test and layers/loss_test.
#include "kernels/channel_cells.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace distconv {
namespace {

// Row-major strides of `padded` (an extent with halo cells around it).
Shape dense_strides(const Shape& padded) {
  Shape s = Shape::filled(padded.ndims(), 1);
  for (int d = padded.ndims() - 2; d >= 0; --d) s[d] = s[d + 1] * padded[d + 1];
  return s;
}

// Channels-last strides of `padded`: C fastest, then W, H, D, N.
Shape channels_last_strides(const Shape& padded) {
  const int n = padded.ndims();
  Shape s = Shape::filled(n, 1);
  Index step = padded[1];
  for (int d = n - 1; d >= 2; --d) {
    s[d] = step;
    step *= padded[d];
  }
  s[0] = step;
  return s;
}

void Check(const Shape& extent) {
  SCOPED_TRACE(::testing::Message() << "extent " << extent);
  Shape padded = extent;
  for (int d = 2; d < extent.ndims(); ++d) padded[d] += 2;  // halos
  const std::array<Shape, 2> strides{dense_strides(padded),
                                     channels_last_strides(extent)};
  const CellWalk<2> w = cell_walk<2>(extent, strides);
  // The expected cells: n outermost, then spatial row-major.
  std::vector<std::array<std::int64_t, 2>> want;
  if (extent.volume() > 0) {
    Shape i = Shape::filled(extent.ndims(), 0);
    while (true) {
      std::array<std::int64_t, 2> at{};
      for (int k = 0; k < 2; ++k) {
        for (int d = 0; d < extent.ndims(); ++d) at[k] += i[d] * strides[k][d];
      }
      want.push_back(at);
      int d = extent.ndims() - 1;
      for (; d >= 0; --d) {
        if (d == 1) continue;
        if (++i[d] < extent[d]) break;
        i[d] = 0;
      }
      if (d < 0) break;
    }
  }
  ASSERT_EQ(w.cells(), static_cast<std::int64_t>(want.size()));
  EXPECT_EQ(w.channels, extent[1]);
  for (std::int64_t e = 0; e < w.cells(); ++e) {
    std::int64_t at[2];
    w.offsets(e / w.per_sample(), e % w.per_sample(), at);
    ASSERT_EQ(at[0], want[e][0]) << "cell " << e;
    ASSERT_EQ(at[1], want[e][1]) << "cell " << e;
  }
  EXPECT_EQ(w.stride[0][1], strides[0][1]);
  EXPECT_EQ(w.stride[1][1], strides[1][1]);
}

TEST(CellWalk, VisitsEveryCellInOrder) {
  Check(Shape{2, 3, 5});
  Check(Shape{2, 3, 4, 5});
  Check(Shape{3, 2, 2, 3, 4});
  Check(Shape{1, 1, 1, 1});
}

TEST(CellWalk, EmptyExtentsHaveNoCell) {
  Check(Shape{0, 3, 4, 5});
  Check(Shape{2, 3, 0, 5});
  Check(Shape{2, 3, 2, 3, 0});
  EXPECT_EQ(cell_walk<1>(Shape{2, 0, 4, 5}, {Shape{20, 20, 5, 1}}).cells(), 0);
}

TEST(ChannelCells, LossCellDescCountsClassIndices) {
  LossDesc desc;
  desc.ignore_index = 7;
  const LossCellDesc d = loss_cell_desc(desc, 3);
  double bad = 0;
  EXPECT_TRUE(d.counts(0, bad));
  EXPECT_TRUE(d.counts(2, bad));
  EXPECT_FALSE(d.counts(7, bad));  // ignored, not bad
  EXPECT_EQ(bad, 0);
  EXPECT_FALSE(d.counts(3, bad));
  EXPECT_FALSE(d.counts(-1, bad));
  EXPECT_EQ(bad, 2);
  const std::int64_t t = 5;
  const LossCellTerm term = loss_cell_count(d, &t);
  EXPECT_EQ(term.count, 0);
  EXPECT_EQ(term.bad, 1);
}

}  // namespace
}  // namespace distconv
