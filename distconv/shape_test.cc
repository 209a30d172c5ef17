#include "distconv/shape.h"

#include <random>
#include <vector>

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

// A box in [-2, 9) x [-2, 9), possibly empty.
Box random_2d_box(std::mt19937_64& rng) {
  Box b{Shape::filled(2, 0), Shape::filled(2, 0)};
  for (int d = 0; d < 2; ++d) {
    b.lower[d] = static_cast<Index>(rng() % 7) - 2;
    b.extent[d] = rng() % 5;
  }
  return b;
}

TEST(Box, IntersectionContainsExactlyTheCommonPoints) {
  std::mt19937_64 rng(2);
  auto random_box = [&] { return random_2d_box(rng); };
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

// Every point of the 2D test window, and whether `boxes` cover it exactly
// once (true), more than once or not at all (false, with a message).
testing::AssertionResult covers_once(const std::vector<Box>& boxes,
                                     const Shape& p, bool want) {
  int hits = 0;
  for (const Box& b : boxes) {
    if (b.empty()) return testing::AssertionFailure() << "empty box " << b;
    hits += b.contains(p);
  }
  if (hits == (want ? 1 : 0)) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << p << " covered " << hits << " times, want " << (want ? 1 : 0);
}

TEST(Box, SubtractAndDisjointUnionCoverEachCellOnce) {
  std::mt19937_64 rng(3);
  auto random_box = [&] { return random_2d_box(rng); };
  for (int trial = 0; trial < 2000; ++trial) {
    const Box a = random_box(), b = random_box();
    const std::vector<Box> rest = subtract(a, b);
    ASSERT_LE(rest.size(), 4u);
    std::vector<Box> some;
    for (int k = static_cast<int>(rng() % 5); k >= 0; --k) {
      some.push_back(random_box());
    }
    const std::vector<Box> once = disjoint_union(some);
    for (Index i = -3; i < 10; ++i) {
      for (Index j = -3; j < 10; ++j) {
        const Shape p{i, j};
        ASSERT_TRUE(covers_once(rest, p, a.contains(p) && !b.contains(p)))
            << a << " - " << b;
        bool in_some = false;
        for (const Box& s : some) in_some = in_some || s.contains(p);
        ASSERT_TRUE(covers_once(once, p, in_some)) << "trial " << trial;
      }
    }
  }
  // A box inside the other leaves nothing; apart, the whole box.
  const Box big{{0, 0}, {4, 4}}, small{{1, 1}, {2, 2}};
  EXPECT_TRUE(subtract(small, big).empty());
  EXPECT_EQ(subtract(big, Box{{9, 9}, {1, 1}}), std::vector<Box>{big});
  EXPECT_EQ(subtract(big, small).size(), 4u);
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
