#include "distconv/distribution.h"

#include <random>

#include "distconv/error.h"
#include "gtest/gtest.h"

namespace distconv {
namespace {

// Checks that the parts tile [0, extent) in order, and that owner() finds
// the non-empty part holding each index.
void ExpectTiles(const BlockPartition& p) {
  Index next = 0;
  for (int i = 0; i < p.parts(); ++i) {
    ASSERT_EQ(p.begin(i), next);
    ASSERT_GE(p.size(i), 0);
    next = p.end(i);
  }
  ASSERT_EQ(next, p.extent());
  for (Index x = 0; x < p.extent(); ++x) {
    const int o = p.owner(x);
    ASSERT_GT(p.size(o), 0);
    ASSERT_TRUE(p.begin(o) <= x && x < p.end(o)) << x << " owned by " << o;
  }
}

TEST(BlockPartition, BalancedGivesTheFirstPartsOneMore) {
  for (Index n = 0; n < 40; ++n) {
    for (int parts = 1; parts <= 12; ++parts) {
      const BlockPartition p = BlockPartition::balanced(n, parts);
      ExpectTiles(p);
      for (int i = 0; i < parts; ++i) {
        EXPECT_EQ(p.size(i), n / parts + (i < n % parts)) << n << "/" << parts;
      }
    }
  }
}

TEST(BlockPartition, ExplicitSizesWithEmptyParts) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<Index> sizes(1 + rng() % 8);
    for (Index& s : sizes) s = rng() % 3 ? rng() % 5 : 0;
    ExpectTiles(BlockPartition::from_sizes(sizes));
  }
  const BlockPartition p = BlockPartition::from_sizes({3, 0, 2});
  EXPECT_EQ(p.owner(2), 0);
  EXPECT_EQ(p.owner(3), 2);
}

TEST(BlockPartition, RejectsBadInput) {
  EXPECT_THROW(BlockPartition::balanced(-1, 2), Error);
  EXPECT_THROW(BlockPartition::balanced(4, 0), Error);
  EXPECT_THROW(BlockPartition::from_sizes({}), Error);
  EXPECT_THROW(BlockPartition::from_sizes({2, -1}), Error);
  EXPECT_THROW(BlockPartition::balanced(4, 2).owner(4), Error);
}

TEST(Distribution, ShardsTileTheTensorOverRandomGrids) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 4 + rng() % 2;
    Shape global = Shape::filled(n, 0), grid = Shape::filled(n, 1);
    for (int d = 0; d < n; ++d) {
      global[d] = rng() % 7;
      grid[d] = 1 + rng() % 3;
    }
    const Distribution dist(global, grid);
    ASSERT_EQ(dist.num_parts(), grid.volume());
    Index total = 0;
    for (int p = 0; p < dist.num_parts(); ++p) {
      ASSERT_EQ(dist.part_index(dist.part_coord(p)), p);
      total += dist.shard(p).volume();
      for (int q = p + 1; q < dist.num_parts(); ++q) {
        ASSERT_TRUE(intersect(dist.shard(p), dist.shard(q)).empty());
      }
    }
    ASSERT_EQ(total, global.volume()) << global << " over " << grid;
    for (int k = 0; k < 20 && global.volume() > 0; ++k) {
      Shape point = Shape::filled(n, 0);
      for (int d = 0; d < n; ++d) point[d] = rng() % global[d];
      ASSERT_TRUE(dist.shard(dist.owner(point)).contains(point));
    }
  }
}

TEST(Distribution, NeighborsOpenAndPeriodic) {
  const Distribution dist(Shape{4, 1, 9, 9}, Shape{2, 1, 3, 1});
  const Shape c{0, 0, 0, 0};
  EXPECT_FALSE(dist.neighbor(c, 2, Side::kLower, Boundary::kOpen));
  EXPECT_EQ(*dist.neighbor(c, 2, Side::kLower, Boundary::kPeriodic),
            (Shape{0, 0, 2, 0}));
  EXPECT_EQ(*dist.neighbor(c, 2, Side::kUpper, Boundary::kOpen),
            (Shape{0, 0, 1, 0}));
  EXPECT_EQ(*dist.neighbor(c, 3, Side::kUpper, Boundary::kPeriodic), c);
  EXPECT_EQ(*dist.neighbor(c, 0, Side::kUpper, Boundary::kOpen),
            (Shape{1, 0, 0, 0}));
  EXPECT_THROW(dist.neighbor(c, 4, Side::kUpper, Boundary::kOpen), Error);
  EXPECT_THROW(dist.shard(Shape{2, 0, 0, 0}), Error);
}

TEST(Distribution, PartsSharingCoordinates) {
  const Distribution d(Shape{4, 6, 8, 8}, Shape{2, 3, 2, 2});  // 24 parts
  for (int part = 0; part < d.num_parts(); ++part) {
    const std::vector<int> set = d.parts_sharing(part, {0, 1});
    ASSERT_EQ(set.size(), 4u);  // the H x W parts
    EXPECT_TRUE(std::is_sorted(set.begin(), set.end()));
    EXPECT_NE(std::find(set.begin(), set.end(), part), set.end());
    for (int q : set) {
      EXPECT_EQ(d.part_coord(q)[0], d.part_coord(part)[0]);
      EXPECT_EQ(d.part_coord(q)[1], d.part_coord(part)[1]);
    }
  }
  EXPECT_EQ(d.parts_sharing(5, {}).size(), 24u);
  EXPECT_EQ(d.parts_sharing(5, {0, 1, 2, 3}), std::vector<int>{5});
}

TEST(Distribution, UnevenExample) {
  const Distribution dist(Shape{8, 16, 10, 10}, Shape{2, 1, 3, 1});
  EXPECT_EQ(dist.shard({1, 0, 2, 0}), (Box{{4, 0, 7, 0}, {4, 16, 3, 10}}));
  EXPECT_EQ(dist.shard({0, 0, 0, 0}).extent[2], 4);
  EXPECT_EQ(dist.owner({5, 3, 4, 9}), (Shape{1, 0, 1, 0}));
  EXPECT_THROW(Distribution(Shape{8, 16, 10}, Shape{2, 1, 3, 1}), Error);
  EXPECT_THROW(Distribution(Shape{8, 16, 10, 10}, Shape{2, 0, 3, 1}), Error);
}

}  // namespace
}  // namespace distconv
