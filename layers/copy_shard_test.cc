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

// A framework's dense row-major (N, C, H, W) block of the shard goes into a
// channels-last tensor with halos and comes back out unchanged.
TEST(CopyShard, ToAndFromAStridedViewOfTheShard) {
  const Shape shape{2, 3, 7, 5};
  for (const Shape& g : testing::grids_without_channel_split(4)) {
    ProcessGrid grid(MPI_COMM_WORLD, g);
    SCOPED_TRACE("grid " + g.to_string());
    const Distribution dist(shape, grid.shape());
    DistTensor<double> t(grid, testing::with_halos(
                                   dist, 1, StorageOrder::kChannelsLast));
    testing::fill_buffer(t, -7.0);
    const Shape extent = t.shard().extent;
    std::vector<double> in = random_vector<double>(extent.volume(), 2);
    std::vector<double> out(in.size(), 0.0);
    copy_shard(StridedView<const double>::contiguous(in.data(), extent), t);
    EXPECT_TRUE(testing::halos_hold(t, -7.0));
    copy_shard(t, StridedView<double>::contiguous(out.data(), extent));
    EXPECT_EQ(out, in);
  }
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, testing::world_size(), 1});
  DistTensor<float> t(grid, HaloLayout(Distribution(shape, grid.shape())));
  std::vector<float> wrong(shape.volume());
  EXPECT_THROW(copy_shard(StridedView<const float>::contiguous(
                              wrong.data(), Shape{2, 3, 7, 6}),
                          t),
               Error);
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
