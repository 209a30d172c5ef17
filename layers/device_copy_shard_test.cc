// copy_shard in GPU memory against the host's, on the same tensors: every
// grid splitting one dimension of a 2D and a 3D tensor, halos of either
// width on either side and both storage orders, uneven and empty shards:
// the destination buffers the same bit for bit (halo cells untouched), on
// a stream of the test's own; a tensor of another distribution fails on
// every rank. Every case skips, saying so, where there is no GPU.
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/copy_shard.h"
#include "layers/device_layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

class DeviceCopyShard : public testing::DeviceLayerTest {};

// Random interior values (seeded by the rank), halo cells `halo`.
template <typename T>
void fill(DistTensor<T>& t, unsigned seed, T halo) {
  t.buffer().for_each([&](const Shape&, T& v) { v = halo; });
  std::mt19937_64 rng(seed * 131 + testing::world_rank());
  std::uniform_real_distribution<double> u(-1, 1);
  t.interior().for_each([&](const Shape&, T& v) { v = T(u(rng)); });
}

HaloLayout with(const Distribution& dist, Index lower, Index upper,
                StorageOrder order) {
  HaloWidths w = HaloWidths::none(dist.ndims());
  for (int d = 2; d < dist.ndims(); ++d) {
    w.lower[d] = lower;
    w.upper[d] = upper;
  }
  return HaloLayout(dist, w).with_storage(order);
}

template <typename T>
void expect_same_copies(const Shape& global) {
  const testing::DeviceStream stream;
  const Exec<DeviceSpace> exec(stream.get());
  for (const Shape& g : testing::one_split_grids(global.ndims())) {
    const ProcessGrid grid(MPI_COMM_WORLD, g);
    const Distribution dist(global, g);
    const HaloLayout from =
        with(dist, 1, 2, StorageOrder::kChannelsFirst);
    const HaloLayout to = with(dist, 2, 0, StorageOrder::kChannelsLast);
    DistTensor<T> x(grid, from), y(grid, to);
    fill(x, 1, T(-3));
    fill(y, 2, T(7));
    DistTensor<T, DeviceSpace> xd = testing::to_device(grid, x);
    DistTensor<T, DeviceSpace> yd = testing::to_device(grid, y);
    copy_shard(x, y);
    copy_shard(xd, yd, exec);
    stream.synchronize();
    SCOPED_TRACE(::testing::Message() << "global " << global << " grid " << g);
    testing::expect_same_buffer(y, yd, "copy_shard");
  }
}

TEST_F(DeviceCopyShard, MatchesTheHostOnEveryOneDimensionSplit) {
  // Uneven shards (5 rows over 2 to 4 ranks), empty ones (3 samples over
  // 4 ranks).
  expect_same_copies<double>(Shape{3, 4, 5, 6});
  expect_same_copies<float>(Shape{2, 3, 5, 4, 3});
  expect_same_copies<bf16>(Shape{2, 3, 5, 4});
  expect_same_copies<fp16>(Shape{2, 3, 5, 4});
}

TEST_F(DeviceCopyShard, AnotherDistributionFailsOnEveryRank) {
  const int n = testing::world_size();
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  DistTensor<float, DeviceSpace> x(
      grid, HaloLayout(Distribution(Shape{1, 2, 2 * n, 3}, grid.shape())));
  DistTensor<float, DeviceSpace> y(
      grid, HaloLayout(Distribution(Shape{1, 2, 2 * n, 4}, grid.shape())));
  testing::expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                                     "copy_shard: to",
                                     [&] { copy_shard(x, y); });
}

}  // namespace
}  // namespace distconv
