// BatchNorm<T, DeviceSpace> against BatchNorm<T> (host memory) on the same
// data, for each statistics scope, on every grid the rank count factors
// into (channel splits included; uneven and empty shards), 2D and 3D, fp64,
// fp32 and bf16: two training steps (forward, backward, the batch and running
// statistics), then inference forward and backward, on a stream of the
// caller's own; in place; 1e4 + noise. Skips, visibly, on a machine
// without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/batch_norm.h"
#include "layers/device_layer_testing.h"
#include "tests/conv_check.h"
#include "tests/device_array.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::DeviceArray;
using testing::expect_close;
using testing::expect_same_interior;
using testing::to_device;
using testing::world_rank;

class DeviceBatchNorm : public testing::DeviceLayerTest {};

template <typename T>
void fill(DistTensor<T>& t, unsigned seed, double offset) {
  const std::vector<T> v = random_values<T>(t.size(), seed, offset);
  std::copy(v.begin(), v.end(), t.data());
}

// Every grid of all ranks for an ndims-dimensional tensor.
std::vector<Shape> every_grid(int ndims) {
  std::vector<Shape> grids = testing::grids_without_channel_split(ndims);
  for (const Shape& g : testing::grids_with_channel_split(ndims)) {
    grids.push_back(g);
  }
  return grids;
}

template <typename T>
void Check(const Shape& global, const Shape& g, BatchNormStats stats,
           double offset, double tol) {
  SCOPED_TRACE(::testing::Message() << "global " << global << ", grid " << g
                                    << ", " << to_string(stats)
                                    << " statistics, offset " << offset);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(global, g);
  const testing::DeviceStream stream;
  BatchNormOptions options;
  options.stats = stats;
  BatchNorm<T> host(grid, dist, options);
  BatchNorm<T, DeviceSpace> dev(grid, dist, options,
                                Exec<DeviceSpace>(stream.get()));
  const Index c = global[1];
  const unsigned seed = 17 * static_cast<unsigned>(world_rank()) + 1;
  using P = Compute<T>;  // scale, shift and their gradients
  const std::vector<P> scale = random_values<P>(c, 3, 1.0);
  const std::vector<P> shift = random_values<P>(c, 4, 0.0);
  DeviceArray<P> scale_d(scale), shift_d(shift);
  std::vector<P> dscale(c), dshift(c);
  DeviceArray<P> dscale_d(dscale), dshift_d(dshift);

  DistTensor<T> x(grid, host.src_layout()), y(grid, host.dst_layout());
  DistTensor<T> dy(grid, host.diff_dst_layout());
  DistTensor<T> dx(grid, host.diff_src_layout());
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(step < 2 ? "training step " + std::to_string(step)
                          : std::string("inference"));
    if (step == 2) {
      host.set_mode(BatchNormMode::kInference);
      dev.set_mode(BatchNormMode::kInference);
    }
    fill(x, seed + step, offset);
    fill(dy, seed + 10 + step, 0.0);
    DistTensor<T, DeviceSpace> xd = to_device(grid, x);
    DistTensor<T, DeviceSpace> dyd = to_device(grid, dy);
    DistTensor<T, DeviceSpace> yd(grid, dev.dst_layout());
    DistTensor<T, DeviceSpace> dxd(grid, dev.diff_src_layout());
    host.forward(x, scale.data(), shift.data(), y);
    dev.forward(xd, scale_d.data, shift_d.data, yd);
    host.backward(x, dy, scale.data(), dx, dscale.data(), dshift.data());
    dev.backward(xd, dyd, scale_d.data, dxd, dscale_d.data, dshift_d.data);
    stream.synchronize();
    expect_same_interior(y, yd, tol, "forward");
    expect_same_interior(dx, dxd, tol, "backward");
    expect_close(dscale_d.read(), dscale, tol, "diff_scale");
    expect_close(dshift_d.read(), dshift, tol, "diff_shift");
    expect_close(dev.batch_mean(), host.batch_mean(), 1e-12, "batch mean");
    expect_close(dev.batch_variance(), host.batch_variance(), 1e-10,
                 "batch variance");
    expect_close(dev.running_mean(), host.running_mean(), 1e-12,
                 "running mean");
    expect_close(dev.running_variance(), host.running_variance(), 1e-10,
                 "running variance");
  }
}

template <typename T>
void CheckEveryGrid(double tol) {
  const std::vector<Shape> shapes = {
      {3, 4, 7, 6},
      {1, 3, 2, 3},  // shards empty on most grids of 4 ranks
      {2, 19, 5, 3},
      {2, 3, 4, 5, 3},
  };
  for (const Shape& global : shapes) {
    for (const Shape& g : every_grid(global.ndims())) {
      for (BatchNormStats stats :
           {BatchNormStats::kShard, BatchNormStats::kSampleBlock,
            BatchNormStats::kGlobal}) {
        Check<T>(global, g, stats, 3.0, tol);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(DeviceBatchNorm, DoubleMatchesTheHostLayerOnEveryGridAndScope) {
  CheckEveryGrid<double>(1e-10);
}

TEST_F(DeviceBatchNorm, FloatMatchesTheHostLayerOnEveryGridAndScope) {
  CheckEveryGrid<float>(1e-5);
}

// bf16 tensors (fp32 scale and shift): both compute in double from the same
// bf16 values and round each output once.
TEST_F(DeviceBatchNorm, Bf16IsWithinItsRoundingOnEveryGridAndScope) {
  CheckEveryGrid<bf16>(1e-2);
}

TEST_F(DeviceBatchNorm, Fp16IsWithinItsRoundingOnEveryGridAndScope) {
  CheckEveryGrid<fp16>(2e-3);
}

// 1e4 + noise: both layers keep the noise's precision.
TEST_F(DeviceBatchNorm, LargeOffsetsKeepPrecision) {
  Check<float>({4, 3, 8, 8}, testing::spatial_grid(4),
               BatchNormStats::kGlobal, 1e4, 1e-4);
  Check<double>({4, 3, 8, 8}, testing::spatial_grid(4),
                BatchNormStats::kGlobal, 1e4, 1e-9);
}

// dst == src and diff_src == diff_dst on the device, against the host
// layer out of place.
TEST_F(DeviceBatchNorm, InPlace) {
  const Shape global{2, 5, 6, 4};
  const Shape g = testing::spatial_grid(4);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(global, g);
  BatchNorm<double> host(grid, dist);
  BatchNorm<double, DeviceSpace> dev(grid, dist);
  const std::vector<double> scale = random_values<double>(5, 1, 1.0);
  const std::vector<double> shift = random_values<double>(5, 2, 0.0);
  DeviceArray<double> scale_d(scale), shift_d(shift);
  std::vector<double> ds(5), dsh(5);
  DeviceArray<double> ds_d(ds), dsh_d(dsh);
  DistTensor<double> x(grid, host.src_layout()), y(grid, host.dst_layout());
  DistTensor<double> dy(grid, host.diff_dst_layout());
  DistTensor<double> dx(grid, host.diff_src_layout());
  fill(x, 5 + world_rank(), 1.0);
  fill(dy, 50 + world_rank(), 0.0);
  DistTensor<double, DeviceSpace> xd = to_device(grid, x);
  DistTensor<double, DeviceSpace> yd = to_device(grid, x);
  DistTensor<double, DeviceSpace> dyd = to_device(grid, dy);
  host.forward(x, scale.data(), shift.data(), y);
  host.backward(x, dy, scale.data(), dx, ds.data(), dsh.data());
  dev.forward(yd, scale_d.data, shift_d.data, yd);  // yd: x, then y
  dev.backward(xd, dyd, scale_d.data, dyd, ds_d.data, dsh_d.data);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_same_interior(y, yd, 1e-10, "forward in place");
  expect_same_interior(dx, dyd, 1e-10, "backward in place");
  expect_close(ds_d.read(), ds, 1e-10, "diff_scale");
  expect_close(dsh_d.read(), dsh, 1e-10, "diff_shift");
}

}  // namespace
}  // namespace distconv
