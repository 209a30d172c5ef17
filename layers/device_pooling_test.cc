// Pooling<T, DeviceSpace> against Pooling<T> (host memory) on the same data
// and grids: forward and backward, max and both averages, 2D and 3D,
// sample, channel and spatial splits, uneven and empty shards, asymmetric
// and circular padding. fp64 to 1e-10, fp32 to 1e-5 (the host runs oneDNN
// there), bf16 within its rounding. Several ranks share one GPU (halos
// host-staged). Skips, visibly, on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/device_layer_testing.h"
#include "layers/pooling.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::expect_same_interior;
using testing::to_device;
using testing::world_rank;
using testing::world_size;

class DevicePooling : public testing::DeviceLayerTest {};

struct Case {
  Shape global;  // N, C, spatial...
  Shape grid;
  PoolDesc desc;  // its kind replaced by each kind in turn
};

PoolDesc window(int dims, Index kernel, Index stride, Index lower,
                Index upper) {
  PoolDesc d = PoolDesc::make(PoolKind::kMax, Shape::filled(dims, kernel));
  d.stride = Shape::filled(dims, stride);
  d.padding_lower = Shape::filled(dims, lower);
  d.padding_upper = Shape::filled(dims, upper);
  return d;
}

// Grids of exactly world_size() ranks.
std::vector<Case> cases() {
  const PoolDesc s2 = window(2, 3, 2, 1, 1);
  const PoolDesc s1 = window(2, 3, 1, 1, 1);
  const PoolDesc asym = window(2, 3, 1, 1, 0);
  const PoolDesc pairs = window(2, 2, 2, 0, 0);
  PoolDesc wrap = s1;
  wrap.padding_mode = {PaddingMode::kZeros, PaddingMode::kCircular};
  const PoolDesc cube = window(3, 3, 1, 1, 1);
  const PoolDesc cube2 = window(3, 3, 2, 1, 1);
  std::vector<Case> all = {
      {{2, 4, 12, 10}, {1, 1, 1, 1}, s2},
      {{1, 3, 9, 11}, {1, 1, 1, 1}, asym},
      {{1, 2, 6, 7, 5}, {1, 1, 1, 1, 1}, cube},
      {{1, 2, 8, 8}, {1, 1, 1, 1}, wrap},
      {{2, 4, 12, 10}, {1, 1, 2, 1}, s2},
      {{2, 4, 12, 10}, {2, 1, 1, 1}, pairs},
      {{1, 3, 9, 11}, {1, 1, 1, 2}, asym},
      {{1, 4, 12, 10}, {1, 2, 1, 1}, s2},  // channels
      {{1, 2, 6, 7, 5}, {1, 1, 2, 1, 1}, cube},
      {{1, 2, 8, 8}, {1, 1, 1, 2}, wrap},
      {{1, 4, 10, 9}, {1, 1, 3, 1}, s1},  // uneven
      {{1, 4, 11, 9}, {1, 1, 1, 3}, s2},  // uneven
      {{1, 2, 9, 9}, {1, 1, 1, 3}, wrap},
      {{2, 4, 12, 10}, {1, 1, 2, 2}, s2},
      {{2, 4, 12, 10}, {2, 1, 2, 1}, pairs},
      {{1, 4, 8, 10}, {1, 2, 1, 2}, s1},   // channels and space
      {{1, 4, 3, 8}, {1, 1, 4, 1}, s1},    // one shard empty
      {{1, 2, 6, 4, 5}, {1, 1, 2, 2, 1}, cube2},
  };
  std::vector<Case> mine;
  for (const Case& c : all) {
    if (c.grid.volume() == world_size()) mine.push_back(c);
  }
  return mine;
}

template <typename T>
void CheckAgainstTheHost(const Case& c, PoolKind kind, double tol) {
  PoolDesc desc = c.desc;
  desc.kind = kind;
  SCOPED_TRACE(::testing::Message()
               << to_string(kind) << ", global " << c.global << ", grid "
               << c.grid << ", kernel " << desc.kernel << ", stride "
               << desc.stride << ", padding " << desc.padding_lower << "/"
               << desc.padding_upper);
  ProcessGrid grid(MPI_COMM_WORLD, c.grid);
  const Distribution dist(c.global, c.grid);
  Pooling<T> host(grid, desc, dist);
  Pooling<T, DeviceSpace> dev(grid, desc, dist);
  ASSERT_EQ(host.plan(), dev.plan());
  if (dev.plan().kernel) {
    EXPECT_NE(dev.describe().find("cuda direct"), std::string::npos)
        << dev.describe();
  }
  std::mt19937_64 rng(29 + world_rank());
  std::uniform_real_distribution<double> val(-1, 1);
  DistTensor<T> x(grid, host.src_layout()), y(grid, host.dst_layout());
  DistTensor<T> dy(grid, host.diff_dst_layout()),
      dx(grid, host.diff_src_layout());
  x.interior().for_each([&](const Shape&, T& v) { v = val(rng); });
  dy.interior().for_each([&](const Shape&, T& v) { v = val(rng); });
  DistTensor<T, DeviceSpace> xd = to_device(grid, x), dyd = to_device(grid, dy);
  DistTensor<T, DeviceSpace> yd(grid, dev.dst_layout()),
      dxd(grid, dev.diff_src_layout());
  // Stale values where the backward pass must zero first.
  std::vector<T> stale(dxd.size(), T(3));
  DeviceSpace::copy_to_device(dxd.data(), stale.data(),
                              sizeof(T) * stale.size());

  host.forward(x, y);
  dev.forward(xd, yd);
  host.backward(x, dy, dx);
  dev.backward(xd, dyd, dxd);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_same_interior(y, yd, tol, "forward");
  expect_same_interior(dx, dxd, tol, "backward");
}

constexpr PoolKind kKinds[] = {PoolKind::kMax,
                               PoolKind::kAverageIncludePadding,
                               PoolKind::kAverageExcludePadding};

TEST_F(DevicePooling, DoubleMatchesTheHostLayer) {
  for (const Case& c : cases()) {
    for (PoolKind k : kKinds) CheckAgainstTheHost<double>(c, k, 1e-10);
  }
}

TEST_F(DevicePooling, FloatMatchesTheHostLayer) {
  for (const Case& c : cases()) {
    for (PoolKind k : kKinds) CheckAgainstTheHost<float>(c, k, 1e-5);
  }
}

// bf16: both sum in fp32 and round once (maxima exactly; averages within
// one rounding: the host's oneDNN may sum in another order).
TEST_F(DevicePooling, Bf16IsWithinItsRoundingOfTheHostLayer) {
  for (const Case& c : cases()) {
    for (PoolKind k : kKinds) CheckAgainstTheHost<bf16>(c, k, 1e-2);
  }
}

TEST_F(DevicePooling, Fp16IsWithinItsRoundingOfTheHostLayer) {
  for (const Case& c : cases()) {
    for (PoolKind k : kKinds) CheckAgainstTheHost<fp16>(c, k, 2e-3);
  }
}

// A second forward and backward on a stream of the caller's own, with new
// data, gives what the host gives; max pooling's backward before any
// forward throws kState on every rank and leaves the layer usable.
TEST_F(DevicePooling, RunsOnTheCallersStreamAndRefusesBackwardFirst) {
  const testing::DeviceStream stream;
  Shape g = Shape::filled(4, 1);
  g[2] = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(Shape{1, 3, 4 * world_size() + 1, 7}, g);
  const PoolDesc desc = window(2, 3, 2, 1, 1);
  Pooling<float> host(grid, desc, dist);
  Pooling<float, DeviceSpace> dev(grid, desc, dist, {},
                                  Exec<DeviceSpace>(stream.get()));
  DistTensor<float> x(grid, host.src_layout()), y(grid, host.dst_layout());
  DistTensor<float> dy(grid, host.diff_dst_layout()),
      dx(grid, host.diff_src_layout());
  DistTensor<float, DeviceSpace> yd(grid, dev.dst_layout()),
      dxd(grid, dev.diff_src_layout());
  {
    DistTensor<float, DeviceSpace> xd = to_device(grid, x),
                                   dyd = to_device(grid, dy);
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                              "needs a forward first",
                              [&] { dev.backward(xd, dyd, dxd); });
  }
  std::mt19937_64 rng(3 + world_rank());
  std::uniform_real_distribution<float> val(-1, 1);
  for (int round = 0; round < 2; ++round) {
    x.interior().for_each([&](const Shape&, float& v) { v = val(rng); });
    dy.interior().for_each([&](const Shape&, float& v) { v = val(rng); });
    DistTensor<float, DeviceSpace> xd = to_device(grid, x),
                                   dyd = to_device(grid, dy);
    host.forward(x, y);
    host.backward(x, dy, dx);
    dev.forward(xd, yd);
    dev.backward(xd, dyd, dxd);
    stream.synchronize();
    expect_same_interior(y, yd, 1e-5, "forward");
    expect_same_interior(dx, dxd, 1e-5, "backward");
  }
}

}  // namespace
}  // namespace distconv
