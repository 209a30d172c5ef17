#include "distconv/shape.h"

#include <random>

#include "distconv/box.h"
#include "distconv/error.h"
#include "gtest/gtest.h"

namespace distconv {
namespace {

TEST(Shape, BasicsAndFormatting) {
  const Shape s{8, 64, 512, 512};
  EXPECT_EQ(s.ndims(), 4);
  EXPECT_EQ(s.volume(), 8LL * 64 * 512 * 512);
  EXPECT_EQ(s.to_string(), "8x64x512x512");
  EXPECT_EQ(Shape().volume(), 1);
  EXPECT_EQ(Shape::filled(3, 2), (Shape{2, 2, 2}));
  EXPECT_EQ(Shape({1, 2}) + Shape({3, 4}), (Shape{4, 6}));
  EXPECT_EQ(-Shape({1, -2}), (Shape{-1, 2}));
}

TEST(Shape, RejectsBadInput) {
  EXPECT_THROW((Shape{1, 2, 3, 4, 5, 6}), Error);
  EXPECT_THROW(Shape::filled(6, 1), Error);
  EXPECT_THROW(Shape({1, 2}) + Shape({1, 2, 3}), Error);
}

TEST(Shape, LinearIndexRoundTripsOverRandomShapes) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + rng() % 5;
    Shape extent = Shape::filled(n, 1);
    for (int d = 0; d < n; ++d) extent[d] = 1 + rng() % 6;
    const Shape strides = row_major_strides(extent);
    EXPECT_EQ(strides[n - 1], 1);
    for (Index i = 0; i < extent.volume(); i += 1 + rng() % 3) {
      const Shape c = unravel(i, extent);
      ASSERT_EQ(linear_index(c, extent), i) << extent << " " << c;
      Index dot = 0;
      for (int d = 0; d < n; ++d) dot += c[d] * strides[d];
      ASSERT_EQ(dot, i);
    }
  }
}

TEST(Box, IntersectionContainsExactlyTheCommonPoints) {
  std::mt19937_64 rng(2);
  auto random_box = [&] {
    Box b{Shape::filled(2, 0), Shape::filled(2, 0)};
    for (int d = 0; d < 2; ++d) {
      b.lower[d] = static_cast<Index>(rng() % 7) - 2;
      b.extent[d] = rng() % 5;
    }
    return b;
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const Box a = random_box(), b = random_box();
    const Box c = intersect(a, b);
    Index count = 0;
    for (Index i = -3; i < 10; ++i) {
      for (Index j = -3; j < 10; ++j) {
        const Shape p{i, j};
        const bool both = a.contains(p) && b.contains(p);
        ASSERT_EQ(c.contains(p), both) << a << " " << b << " " << p;
        count += both;
      }
    }
    EXPECT_EQ(c.volume(), count);
    EXPECT_TRUE(a.contains(c));
    EXPECT_TRUE(b.contains(c));
  }
}

TEST(Box, ExpandedAndShifted) {
  const Box b{{0, 0, 4, 4}, {1, 2, 3, 3}};
  EXPECT_EQ(b.expanded({0, 0, 1, 2}, {0, 0, 1, 0}),
            (Box{{0, 0, 3, 2}, {1, 2, 5, 5}}));
  EXPECT_EQ(b.shifted({0, 0, -4, -4}).lower, (Shape{0, 0, 0, 0}));
  EXPECT_EQ(b.upper(), (Shape{1, 2, 7, 7}));
}

}  // namespace
}  // namespace distconv
