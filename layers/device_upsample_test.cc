// Upsample<T, DeviceSpace> against Upsample<T> (host memory) on the same
// data: factors of 1 to 3 per dimension, 1D to 3D, grids splitting
// samples, channels and space (uneven and empty shards), tensors of
// different halo widths and storage orders, on a stream of the caller's
// own; equal bit for bit (the backward sums in the host's order), halo
// cells untouched. Skips, visibly, on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/device_layer_testing.h"
#include "layers/upsample.h"
#include "tests/mpi_testing.h"
#include "tests/shard_testing.h"

namespace distconv {
namespace {

using testing::expect_same_buffer;
using testing::to_device;
using testing::with_halos;
using testing::world_rank;

class DeviceUpsample : public testing::DeviceLayerTest {};

template <typename T>
void Check(const Shape& global, const Shape& factors, const Shape& g) {
  SCOPED_TRACE(::testing::Message() << "global " << global << ", factors "
                                    << factors << ", grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const testing::DeviceStream stream;
  const Distribution dist(global, g);
  const Upsample<T> host(grid, UpsampleDesc{factors}, dist);
  const Upsample<T, DeviceSpace> dev(grid, UpsampleDesc{factors}, dist,
                                     Exec<DeviceSpace>(stream.get()));
  std::mt19937_64 rng(5 + world_rank());
  std::uniform_real_distribution<double> val(-2, 2);
  auto fill = [&](DistTensor<T>& t) {
    t.buffer().for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  };
  const Distribution& out = host.dst_distribution();
  DistTensor<T> x(grid, with_halos(dist, 1, StorageOrder::kChannelsFirst));
  DistTensor<T> y(grid, with_halos(out, 2, StorageOrder::kChannelsLast));
  DistTensor<T> dy(grid, HaloLayout(out));
  DistTensor<T> dx(grid, with_halos(dist, 1, StorageOrder::kChannelsLast));
  for (DistTensor<T>* t : {&x, &y, &dy, &dx}) fill(*t);
  auto xd = to_device(grid, x), yd = to_device(grid, y),
       dyd = to_device(grid, dy), dxd = to_device(grid, dx);
  host.forward(x, y);
  dev.forward(xd, yd);
  host.backward(dy, dx);
  dev.backward(dyd, dxd);
  stream.synchronize();
  expect_same_buffer(y, yd, "forward");
  expect_same_buffer(dx, dxd, "backward");
}

template <typename T>
void CheckAll() {
  for (const Shape& g : testing::one_split_grids(4)) {
    Check<T>(Shape{2, 3, 5, 4}, Shape{2, 3}, g);
    Check<T>(Shape{1, 2, 2, 3}, Shape{1, 2}, g);  // empty shards on 3 ranks
    Check<T>(Shape{2, 3, 4, 3}, Shape{1, 1}, g);  // a copy
  }
  for (const Shape& g : testing::one_split_grids(5)) {
    Check<T>(Shape{1, 3, 3, 2, 4}, Shape{2, 1, 3}, g);
  }
  for (const Shape& g : testing::one_split_grids(3)) {
    Check<T>(Shape{2, 3, 7}, Shape{3}, g);
  }
}

TEST_F(DeviceUpsample, FloatMatchesTheHostBitForBit) { CheckAll<float>(); }

TEST_F(DeviceUpsample, DoubleMatchesTheHostBitForBit) { CheckAll<double>(); }

TEST_F(DeviceUpsample, Bf16MatchesTheHostBitForBit) { CheckAll<bf16>(); }
TEST_F(DeviceUpsample, Fp16MatchesTheHostBitForBit) { CheckAll<fp16>(); }

}  // namespace
}  // namespace distconv
