// Activation<T, DeviceSpace> against Activation<T> (host memory) on the same
// data: relu and leaky relu (slopes of either sign), forward, backward and
// backward from the output, out of place and in place, on grids splitting
// samples, channels and space (uneven and empty shards), 2D and 3D, with
// tensors of different halo widths and storage orders; equal bit for bit
// (the same math, kernels/activation_ops.h), infinities and signed zeros
// included, NaN where the host has NaN; halo cells untouched; on a stream
// of the caller's own.
// Skips, visibly, on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/activation.h"
#include "layers/device_layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_same_buffer;
using testing::to_device;
using testing::to_host;
using testing::world_rank;
using testing::world_size;

class DeviceActivation : public testing::DeviceLayerTest {};

template <typename T>
void Check(const Shape& global, const Shape& g, const ActivationDesc& desc) {
  SCOPED_TRACE(::testing::Message()
               << to_string(desc.kind) << " slope " << desc.slope()
               << ", global " << global << ", grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(global, g);
  const testing::DeviceStream stream;
  const Activation<T> host(grid, desc, dist);
  const Activation<T, DeviceSpace> dev(grid, desc, dist,
                                       Exec<DeviceSpace>(stream.get()));
  // Four layouts: the plain one, halos of 1 and 2 (channels-last), halos
  // of 1 channels-first.
  const int n = global.ndims();
  Shape one = Shape::filled(n, 0), two = Shape::filled(n, 0);
  for (int d = 2; d < n; ++d) one[d] = 1, two[d] = 2;
  const HaloLayout plain = host.layout();
  const HaloLayout h1(dist, HaloWidths::symmetric(one));
  const HaloLayout h2(dist, HaloWidths::symmetric(two));
  const HaloLayout h1_first = h1.with_storage(StorageOrder::kChannelsFirst);
  std::mt19937_64 rng(41 + world_rank());
  std::uniform_real_distribution<double> val(-2, 2);
  using Limits = std::numeric_limits<Compute<T>>;  // bf16: fp32's
  const T special[] = {T(0), -T(0), T(Limits::infinity()),
                       T(-Limits::infinity()), T(Limits::quiet_NaN())};
  auto fill = [&](DistTensor<T>& t) {
    Index i = 0;
    t.buffer().for_each([&](const Shape&, T& v) {
      v = i++ % 7 == 0 ? special[(i / 7) % 5] : T(val(rng));
    });
  };
  DistTensor<T> x(grid, h1), dy(grid, h2), y(grid, h1_first), dx(grid, plain),
      dx_from_y(grid, h2);
  for (DistTensor<T>* t : {&x, &dy, &y, &dx, &dx_from_y}) fill(*t);
  auto xd = to_device(grid, x), dyd = to_device(grid, dy),
       yd = to_device(grid, y), dxd = to_device(grid, dx),
       dx_from_yd = to_device(grid, dx_from_y);
  host.forward(x, y);
  dev.forward(xd, yd);
  host.backward(x, dy, dx);
  dev.backward(xd, dyd, dxd);
  if (desc.keeps_sign()) {
    host.backward_from_dst(y, dy, dx_from_y);
    dev.backward_from_dst(yd, dyd, dx_from_yd);
  }
  stream.synchronize();
  expect_same_buffer(y, yd, "forward");
  expect_same_buffer(dx, dxd, "backward");
  expect_same_buffer(dx_from_y, dx_from_yd, "backward from dst");
  if (desc.keeps_sign()) {  // in place: x becomes y, dy becomes dx
    host.forward(x, x);
    dev.forward(xd, xd);
    host.backward_from_dst(x, dy, dy);
    dev.backward_from_dst(xd, dyd, dyd);
    stream.synchronize();
    expect_same_buffer(x, xd, "forward in place");
    expect_same_buffer(dy, dyd, "backward in place");
  }
}

template <typename T>
void CheckAll() {
  const std::vector<ActivationDesc> descs = {ActivationDesc::relu(),
                                             ActivationDesc::leaky_relu(0.1),
                                             ActivationDesc::leaky_relu(-0.5)};
  for (const ActivationDesc& desc : descs) {
    for (const Shape& g : testing::one_split_grids(4))
      Check<T>(Shape{2, 3, 5, 7}, g, desc);
    for (const Shape& g : testing::one_split_grids(5))
      Check<T>(Shape{1, 4, 3, 5, 2}, g, desc);
  }
}

TEST_F(DeviceActivation, FloatMatchesTheHostBitForBit) { CheckAll<float>(); }

TEST_F(DeviceActivation, DoubleMatchesTheHostBitForBit) { CheckAll<double>(); }

TEST_F(DeviceActivation, Bf16MatchesTheHostBitForBit) { CheckAll<bf16>(); }
TEST_F(DeviceActivation, Fp16MatchesTheHostBitForBit) { CheckAll<fp16>(); }

// A tensor of another distribution is refused before anything is queued.
TEST_F(DeviceActivation, RefusesATensorOfAnotherDistribution) {
  Shape g = Shape::filled(4, 1);
  g[2] = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Activation<float, DeviceSpace> relu(grid, ActivationDesc::relu(),
                                            Distribution(Shape{1, 2, 8, 4}, g));
  DistTensor<float, DeviceSpace> x(grid, relu.layout());
  DistTensor<float, DeviceSpace> other(
      grid, HaloLayout(Distribution(Shape{1, 2, 8, 5}, g)));
  try {
    relu.forward(x, other);
    FAIL() << "a dst of another distribution was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("relu: dst"), std::string::npos);
  }
}

}  // namespace
}  // namespace distconv
