// Loss<T, DeviceSpace> against Loss<T> (host memory) on the same data:
// cross-entropy on class indices (with ignored cells) and on probabilities,
// mean squared error, mean and sum reductions; the loss, every sample's loss
// and the gradient, on grids splitting samples and space (uneven and empty
// shards), 2D and 3D, with tensors of different halo widths and storage
// orders, samples of one to 16,900 cells, the gradient in place too; within
// 1e-5 (float), 1e-10 (double) and 1e-2 (bf16), halo cells untouched; on a
// stream of the caller's own. A class index out of range throws the same
// kInvalidArgument on every rank, in forward and backward. Skips, visibly,
// on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "layers/device_layer_testing.h"
#include "layers/loss.h"
#include "tests/mpi_testing.h"
#include "tests/shard_testing.h"

namespace distconv {
namespace {

using testing::expect_close_buffer;
using testing::to_device;
using testing::with_halos;
using testing::world_rank;
using testing::world_size;

class DeviceLoss : public testing::DeviceLayerTest {};

constexpr std::int64_t kIgnore = -100;

// The target's values: class indices in [0, C) with about one cell in five
// ignored, or values in [0, 1).
template <typename Target>
void fill_target(DistTensor<Target>& t, Index classes, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> val(0, 1);
  std::uniform_int_distribution<std::int64_t> cls(0, classes - 1);
  t.buffer().for_each([&](const Shape&, Target& v) {
    if constexpr (std::is_integral_v<Target>) {
      v = val(rng) < 0.2 ? kIgnore : cls(rng);
    } else {
      v = Target(val(rng));
    }
  });
}

template <typename T, typename Target>
void Check(const LossDesc& desc, const Shape& global, const Shape& g) {
  SCOPED_TRACE(::testing::Message()
               << to_string(desc.kind) << ", " << to_string(desc.reduction)
               << ", global " << global << ", grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const testing::DeviceStream stream;
  const Distribution dist(global, g);
  Loss<T> host(grid, desc, dist);
  Loss<T, DeviceSpace> dev(grid, desc, dist, Exec<DeviceSpace>(stream.get()));
  std::mt19937_64 rng(29 + world_rank());
  std::uniform_real_distribution<double> val(-4, 4);
  DistTensor<T> x(grid, with_halos(dist, 1, StorageOrder::kChannelsFirst));
  DistTensor<Target> t(grid, with_halos(host.target_layout().distribution(), 1,
                                        StorageOrder::kChannelsLast));
  DistTensor<T> dx(grid, with_halos(dist, 2, StorageOrder::kChannelsLast));
  x.buffer().for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  dx.buffer().for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  fill_target(t, global[1], rng);
  auto xd = to_device(grid, x), dxd = to_device(grid, dx);
  auto td = to_device(grid, t);
  const double want = host.forward(x, t);
  const double got = dev.forward(xd, td);
  EXPECT_NEAR(got, want, testing::kTolerance<T> * (1 + std::abs(want)));
  EXPECT_EQ(dev.first_sample(), host.first_sample());
  testing::expect_close(dev.sample_losses(), host.sample_losses(),
                        testing::kTolerance<T>, "sample losses");
  host.backward(x, t, dx);
  dev.backward(xd, td, dxd);
  stream.synchronize();
  expect_close_buffer(dx, dxd, testing::kTolerance<T>, "backward");
  // In place: the prediction becomes its gradient.
  host.backward(x, t, x);
  dev.backward(xd, td, xd);
  stream.synchronize();
  expect_close_buffer(x, xd, testing::kTolerance<T>, "backward in place");
}

template <typename T>
void CheckAll() {
  for (LossReduction r : {LossReduction::kMean, LossReduction::kSum}) {
    LossDesc indices = LossDesc::make(LossKind::kCrossEntropyIndices, r);
    indices.ignore_index = kIgnore;
    const LossDesc probabilities =
        LossDesc::make(LossKind::kCrossEntropyProbabilities, r);
    const LossDesc mse = LossDesc::make(LossKind::kMeanSquaredError, r);
    for (const Shape& g : testing::sample_or_space_grids(4)) {
      for (const Shape& global :
           {Shape{3, 5, 4, 3}, Shape{1, 3, 2, 3}, Shape{2, 1, 3, 2}}) {
        Check<T, std::int64_t>(indices, global, g);
        Check<T, T>(probabilities, global, g);
        Check<T, T>(mse, global, g);
      }
    }
    for (const Shape& g : testing::sample_or_space_grids(5)) {
      Check<T, std::int64_t>(indices, Shape{2, 6, 3, 2, 4}, g);
      Check<T, T>(mse, Shape{2, 6, 3, 2, 4}, g);
    }
    // Samples of more cells than the sums' blocks take in one sweep (64
    // blocks of 256 threads), split along N and along W.
    const std::vector<Shape> grids = testing::sample_or_space_grids(4);
    for (const Shape& g : {grids[0], grids.back()}) {
      Check<T, std::int64_t>(indices, Shape{2, 3, 130, 130}, g);
      Check<T, T>(probabilities, Shape{2, 3, 130, 130}, g);
    }
  }
}

TEST_F(DeviceLoss, FloatMatchesTheHost) { CheckAll<float>(); }

TEST_F(DeviceLoss, DoubleMatchesTheHost) { CheckAll<double>(); }

TEST_F(DeviceLoss, Bf16IsWithinItsRoundingOfTheHost) { CheckAll<bf16>(); }
TEST_F(DeviceLoss, Fp16IsWithinItsRoundingOfTheHost) { CheckAll<fp16>(); }

// Rank 0's first cell holds class C: every rank throws, in both passes.
TEST_F(DeviceLoss, AClassOutOfRangeThrowsOnEveryRank) {
  const Shape g{world_size(), 1, 1, 1};
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(Shape{world_size(), 4, 3, 2}, g);
  Loss<float, DeviceSpace> loss(grid, LossDesc(), dist);
  DistTensor<float, DeviceSpace> x(grid, loss.prediction_layout());
  DistTensor<float, DeviceSpace> dx(grid, loss.diff_prediction_layout());
  DistTensor<std::int64_t> t(grid, loss.target_layout());
  if (world_rank() == 0) t.data()[0] = 4;
  auto td = to_device(grid, t);
  for (int pass = 0; pass < 2; ++pass) {
    try {
      if (pass == 0) {
        loss.forward(x, td);
      } else {
        loss.backward(x, td, dx);
      }
      FAIL() << "a class index of 4 out of 4 classes was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("1 class indices outside [0, 4)"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace distconv
