#include "distconv/shard_distribution.h"

#include "distconv/error.h"
#include "gtest/gtest.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::world_size;

// Each rank passes its shard of `expected`; every rank gets it back.
TEST(DistributionOfShards, RecoversEveryPartitionOfEveryGrid) {
  for (int ndims : {4, 5}) {
    for (const Shape& grid_shape :
         testing::factorizations(world_size(), ndims)) {
      SCOPED_TRACE(grid_shape.to_string());
      ProcessGrid grid(MPI_COMM_WORLD, grid_shape);
      // Uneven (7 over 2, 3, 4 parts) and empty parts (2 over 3 or 4).
      Shape global = Shape::filled(ndims, 7);
      global[0] = 2;
      const Distribution expected(global, grid_shape);
      const Distribution got = distribution_of_shards(
          grid, expected.shard(grid.rank()).extent);
      EXPECT_EQ(got, expected) << got.describe();
      EXPECT_EQ(got.global_shape(), global);
    }
  }
}

TEST(DistributionOfShards, ShardsThatDoNotTileThrowTheSameErrorEverywhere) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  // Same grid coordinate along N, C, H but different heights.
  const Shape local{1, 3, 4 + (grid.rank() == 1 ? 1 : 0), 2};
  expect_error_on_all_ranks(grid.comm(), ErrorKind::kShapeMismatch,
                            "do not tile", [&] {
                              distribution_of_shards(grid, local);
                            });
}

TEST(DistributionOfShards, AShardOfTheWrongRankThrowsEverywhere) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  const Shape local = grid.rank() == 0 ? Shape{1, 3, 4} : Shape{1, 3, 4, 2};
  expect_error_on_all_ranks(grid.comm(), ErrorKind::kShapeMismatch,
                            "3-dimensional shard", [&] {
                              distribution_of_shards(grid, local);
                            });
}

// The tags of every rank come back on every rank, with the shards'
// distribution, from the one allgather; shards that do not tile are
// reported by distribution_of, after the tags were read.
TEST(GatherShards, EveryRanksTagsAndTheDistribution) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const Distribution expected(Shape{2, 3, 7, 5}, grid.shape());
  const GatheredShards g =
      gather_shards(grid, expected.shard(grid.rank()).extent,
                    {10 + grid.rank(), -grid.rank()});
  for (int r = 0; r < world_size(); ++r) {
    EXPECT_EQ(g.tag(r, 0), 10 + r);
    EXPECT_EQ(g.tag(r, 1), -r);
  }
  EXPECT_EQ(distribution_of(grid, g), expected);

  const Shape bad{2, 3, grid.rank() == 0 ? 1 : 2, 4 + grid.rank()};
  const GatheredShards b = gather_shards(grid, bad, {7, 7});
  EXPECT_EQ(b.tag(world_size() - 1, 0), 7);
  if (world_size() > 1) {
    expect_error_on_all_ranks(grid.comm(), ErrorKind::kShapeMismatch,
                              "do not tile", [&] { distribution_of(grid, b); });
  }
  // Values from another grid's gathering.
  ProcessGrid wider(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  GatheredShards short_one = g;
  short_one.values.pop_back();
  expect_error_on_all_ranks(grid.comm(), ErrorKind::kInvalidArgument,
                            "shards gathered over",
                            [&] { distribution_of(wider, short_one); });
}

}  // namespace
}  // namespace distconv
