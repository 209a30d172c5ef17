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

}  // namespace
}  // namespace distconv
