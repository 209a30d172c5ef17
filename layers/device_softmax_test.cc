// Softmax<T, DeviceSpace> against Softmax<T> (host memory) on the same data:
// softmax and log-softmax, forward and backward, out of place and in place,
// on grids splitting samples and space (uneven and empty shards), 2D and 3D,
// with tensors of different halo widths and storage orders (the host's
// loops) and of the plan's own layouts (oneDNN in fp32); within 1e-5
// (float), 1e-10 (double) and 1e-2 (bf16) per cell, halo cells untouched; on
// a stream of the caller's own. A grid splitting channels is refused as on
// the host. Skips, visibly, on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "layers/device_layer_testing.h"
#include "layers/softmax.h"
#include "tests/mpi_testing.h"
#include "tests/shard_testing.h"

namespace distconv {
namespace {

using testing::expect_close_buffer;
using testing::to_device;
using testing::with_halos;
using testing::world_rank;
using testing::world_size;

class DeviceSoftmax : public testing::DeviceLayerTest {};

// Both layers' passes on tensors of these layouts (x, y, dy, dx), out of
// place, then in place (x becomes y, dy becomes dx).
template <typename T>
void CheckLayouts(const ProcessGrid& grid, Softmax<T>& host,
                  Softmax<T, DeviceSpace>& dev,
                  const testing::DeviceStream& stream,
                  const std::vector<HaloLayout>& layouts, std::mt19937_64& rng,
                  const char* what) {
  SCOPED_TRACE(what);
  std::uniform_real_distribution<double> val(-4, 4);
  auto fill = [&](DistTensor<T>& t) {
    t.buffer().for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  };
  DistTensor<T> x(grid, layouts[0]), y(grid, layouts[1]), dy(grid, layouts[2]),
      dx(grid, layouts[3]);
  for (DistTensor<T>* t : {&x, &y, &dy, &dx}) fill(*t);
  auto xd = to_device(grid, x), yd = to_device(grid, y),
       dyd = to_device(grid, dy), dxd = to_device(grid, dx);
  const double tol = testing::kTolerance<T>;
  host.forward(x, y);
  dev.forward(xd, yd);
  host.backward(y, dy, dx);
  dev.backward(yd, dyd, dxd);
  stream.synchronize();
  expect_close_buffer(y, yd, tol, "forward");
  expect_close_buffer(dx, dxd, tol, "backward");
  host.forward(x, x);
  dev.forward(xd, xd);
  host.backward(x, dy, dy);
  dev.backward(xd, dyd, dyd);
  stream.synchronize();
  expect_close_buffer(x, xd, tol, "forward in place");
  expect_close_buffer(dy, dyd, tol, "backward in place");
}

template <typename T>
void Check(SoftmaxKind kind, const Shape& global, const Shape& g) {
  SCOPED_TRACE(::testing::Message()
               << to_string(kind) << ", global " << global << ", grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const testing::DeviceStream stream;
  SoftmaxOptions options;
  options.kind = kind;
  const Distribution dist(global, g);
  Softmax<T> host(grid, dist, options);
  Softmax<T, DeviceSpace> dev(grid, dist, options,
                              Exec<DeviceSpace>(stream.get()));
  std::mt19937_64 rng(17 + world_rank());
  const HaloLayout& plan = host.src_layout();
  // The host runs its loops in double on these ...
  CheckLayouts(grid, host, dev, stream,
               {with_halos(dist, 1, StorageOrder::kChannelsFirst), plan,
                with_halos(dist, 2, StorageOrder::kChannelsLast),
                with_halos(dist, 1, StorageOrder::kChannelsLast)},
               rng, "tensors with halos");
  // ... and oneDNN on fp32 on the plan's own layouts.
  CheckLayouts(grid, host, dev, stream, {plan, plan, plan, plan}, rng,
               "the plan's layouts");
}

template <typename T>
void CheckAll() {
  for (SoftmaxKind kind : {SoftmaxKind::kSoftmax, SoftmaxKind::kLogSoftmax}) {
    for (const Shape& g : testing::sample_or_space_grids(4)) {
      Check<T>(kind, Shape{2, 5, 4, 3}, g);  // uneven on 3 ranks
      Check<T>(kind, Shape{1, 3, 2, 3}, g);  // empty shards on 3 ranks
      Check<T>(kind, Shape{2, 1, 3, 2}, g);  // one channel
    }
    for (const Shape& g : testing::sample_or_space_grids(5))
      Check<T>(kind, Shape{2, 6, 3, 2, 4}, g);
  }
}

TEST_F(DeviceSoftmax, FloatMatchesTheHost) { CheckAll<float>(); }

TEST_F(DeviceSoftmax, DoubleMatchesTheHost) { CheckAll<double>(); }

TEST_F(DeviceSoftmax, Bf16IsWithinItsRoundingOfTheHost) { CheckAll<bf16>(); }
TEST_F(DeviceSoftmax, Fp16IsWithinItsRoundingOfTheHost) { CheckAll<fp16>(); }

TEST_F(DeviceSoftmax, RefusesAChannelSplitAndAnotherDistribution) {
  if (world_size() > 1) {
    const Shape g{1, world_size(), 1, 1};
    ProcessGrid grid(MPI_COMM_WORLD, g);
    try {
      Softmax<float, DeviceSpace> s(grid, Distribution(Shape{1, 4, 3, 3}, g));
      FAIL() << "a grid splitting channels was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    }
  }
  const Shape g{1, 1, world_size(), 1};
  ProcessGrid grid(MPI_COMM_WORLD, g);
  Softmax<float, DeviceSpace> s(grid, Distribution(Shape{1, 2, 8, 4}, g));
  DistTensor<float, DeviceSpace> x(grid, s.src_layout());
  DistTensor<float, DeviceSpace> other(
      grid, HaloLayout(Distribution(Shape{1, 2, 8, 5}, g)));
  try {
    s.forward(x, other);
    FAIL() << "a dst of another distribution was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("dst"), std::string::npos);
  }
}

}  // namespace
}  // namespace distconv
