// InterpolateDesc: PyTorch's source coordinates (values worked out from its
// formulas, checked against torch.nn.functional.interpolate in
// python/tests/science_test.py), output distributions and the halos they
// need, refusals.
#include "distconv/interpolate_desc.h"

#include <gtest/gtest.h>

#include "distconv/error.h"

namespace distconv {
namespace {

TEST(InterpolateDesc, HalfPixelCentres) {
  const InterpolateDesc d = InterpolateDesc::of_size({8});
  // s = max(0, (o + 0.5) * 4 / 8 - 0.5).
  const LinearTap t0 = d.tap(0, 4, 0), t1 = d.tap(0, 4, 1),
                  t7 = d.tap(0, 4, 7);
  EXPECT_EQ(t0.i0, 0);
  EXPECT_DOUBLE_EQ(t0.w1, 0.0);
  EXPECT_EQ(t1.i0, 0);
  EXPECT_EQ(t1.i1, 1);
  EXPECT_DOUBLE_EQ(t1.w1, 0.25);
  EXPECT_EQ(t7.i0, 3);  // s = 3.25: clamped to the last cell
  EXPECT_EQ(t7.i1, 3);
  EXPECT_DOUBLE_EQ(t7.w1, 0.25);
}

TEST(InterpolateDesc, AlignedCornersAndScales) {
  InterpolateDesc d = InterpolateDesc::of_size({7});
  d.align_corners = AlignCorners::kYes;
  const LinearTap t = d.tap(0, 4, 5);  // s = 5 * 3 / 6 = 2.5
  EXPECT_EQ(t.i0, 2);
  EXPECT_EQ(t.i1, 3);
  EXPECT_DOUBLE_EQ(t.w0, 0.5);
  EXPECT_DOUBLE_EQ(d.tap(0, 4, 6).i0, 3);
  InterpolateDesc one = InterpolateDesc::of_size({1});
  one.align_corners = AlignCorners::kYes;
  EXPECT_EQ(one.tap(0, 5, 0).i0, 0);
  // A scale factor of 3 on 5 cells: 15 outputs with r = 1/3 exactly as
  // PyTorch uses it.
  InterpolateDesc s = InterpolateDesc::of_size({15});
  s.scales = {1.0 / 3.0};
  const LinearTap u = s.tap(0, 5, 4);  // s = 4.5 / 3 - 0.5 = 1.0
  EXPECT_EQ(u.i0, 1);
  EXPECT_NEAR(u.w1, 0.0, 1e-15);
}

TEST(InterpolateDesc, DistributionAndHalos) {
  const InterpolateDesc d = InterpolateDesc::of_size({20, 6});
  const Distribution src(Shape{2, 3, 10, 3}, Shape{1, 1, 3, 1});  // 4, 3, 3
  const Distribution dst = d.dst_distribution(src);
  EXPECT_EQ(dst.global_shape(), (Shape{2, 3, 20, 6}));
  EXPECT_EQ(dst.partition(2), BlockPartition::balanced(20, 3));  // 7, 7, 6
  const HaloLayout layout = d.src_layout(src, dst);
  // Part 1: outputs 7..13 read inputs 3..7; its shard is 4..6.
  EXPECT_EQ(layout.widths(1).lower[2], 1);
  EXPECT_EQ(layout.widths(1).upper[2], 1);
  EXPECT_EQ(layout.widths(0).lower[2], 0);
  // A 1x1 input upsampled: every part reads cell 0.
  const Distribution one(Shape{1, 2, 1, 1}, Shape{1, 1, 3, 1});
  const InterpolateDesc big = InterpolateDesc::of_size({9, 4});
  const HaloLayout l1 = big.src_layout(one, big.dst_distribution(one));
  EXPECT_EQ(l1.widths(2).lower[2], 1);
  EXPECT_EQ(l1.buffer_box(2).lower[2], 0);
}

TEST(InterpolateDesc, Refusals) {
  EXPECT_THROW(InterpolateDesc::of_size({4, 4}).validate({1, 2, 3}), Error);
  EXPECT_THROW(InterpolateDesc::of_size({0}).validate({1, 2, 3}), Error);
  EXPECT_THROW(InterpolateDesc::of_size({4}).validate({1, 2, 0}), Error);
  InterpolateDesc d = InterpolateDesc::of_size({4});
  d.scales = {-1.0};
  EXPECT_THROW(d.validate({1, 2, 3}), Error);
}

}  // namespace
}  // namespace distconv
