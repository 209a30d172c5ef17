// copy_shard between layouts with other halos and storage orders, on every
// grid: the gathered tensor is the same, halos of the target untouched;
// mismatched distributions fail on every rank.
#include "layers/copy_shard.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/shard_testing.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

TEST(CopyShard, KeepsEveryValueAcrossLayouts) {
  const Shape shape{2, 3, 7, 5};
  for (const Shape& g : testing::grids_without_channel_split(4)) {
    ProcessGrid grid(MPI_COMM_WORLD, g);
    SCOPED_TRACE("grid " + g.to_string());
    const Distribution dist(shape, grid.shape());
    const auto x = random_vector<double>(shape.volume(), 1);
    DistTensor<double> from = testing::scattered(
        grid, HaloLayout(dist).with_storage(StorageOrder::kChannelsLast), x);
    DistTensor<double> to(grid, testing::with_halos(
                                    dist, 2, StorageOrder::kChannelsFirst));
    testing::fill_buffer(to, -7.0);
    copy_shard(from, to);
    EXPECT_TRUE(testing::halos_hold(to, -7.0));
    const std::vector<double> y = testing::gathered(to);
    if (grid.rank() == 0) {
      EXPECT_EQ(y, x);
    }
  }
}

TEST(CopyShard, AnotherDistributionFailsOnEveryRank) {
  const int n = testing::world_size();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  DistTensor<float> a(grid, HaloLayout(Distribution(Shape{1, 2, 4, 4},
                                                    grid.shape())));
  DistTensor<float> b(grid, HaloLayout(Distribution(Shape{1, 2, 5, 4},
                                                    grid.shape())));
  testing::expect_error_on_all_ranks(MPI_COMM_WORLD,
                                     ErrorKind::kShapeMismatch,
                                     "copy_shard: to",
                                     [&] { copy_shard(a, b); });
}

}  // namespace
}  // namespace distconv
