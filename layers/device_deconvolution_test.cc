// Deconvolution<T, DeviceSpace> against Deconvolution<T> (host memory) on
// the same data, for the host layer's own cases (layers/deconv_cases.h:
// 2D and 3D, stride, dilation, asymmetric and circular padding, output
// padding, groups, kernels smaller than the stride) on every grid of the
// ranks that splits samples and space (uneven and empty shards): forward
// (halo contributions summed home, bias added), backward-data and
// backward-weights (the gradients summed over the ranks), twice each (the
// plan is reused). fp64 to 1e-10, fp32 to 1e-5, bf16 and fp16 (fp32
// weights) within their rounding. Several ranks share one GPU (halos
// host-staged). A grid splitting channels throws on every rank. Skips, visibly,
// on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/deconv_cases.h"
#include "layers/deconvolution.h"
#include "layers/device_layer_testing.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::deconv;
using testing::deconv_cases;
using testing::DeconvCase;
using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

class DeviceDeconvolution : public testing::DeviceLayerTest {};

template <typename T>
void CheckAgainstTheHost(const DeconvCase& c, const Shape& g, double tol) {
  SCOPED_TRACE(::testing::Message() << c.name << " on grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(c.src_shape, g);
  Deconvolution<T> host(grid, c.desc, dist);
  Deconvolution<T, DeviceSpace> dev(grid, c.desc, dist);
  // Weights and bias the same on every rank; the tensors' values each
  // rank's own.
  std::mt19937_64 shared(7), rng(23 + world_rank());
  std::uniform_real_distribution<double> val(-1, 1);
  std::vector<Compute<T>> w(c.desc.weights_shape().volume()),
      b(c.desc.bias == ConvBias::kAdd ? c.desc.out_channels : 0);
  for (auto& v : w) v = T(val(shared));  // values T holds exactly
  for (auto& v : b) v = T(val(shared));
  for (int round = 0; round < 2; ++round) {  // the plan reused
    testing::expect_same_weighted_passes<T>(grid, host, dev, w, b, rng, tol);
  }
}

template <typename T>
void CheckAll(double tol) {
  for (const DeconvCase& c : deconv_cases()) {
    for (const Shape& g :
         testing::grids_without_channel_split(c.src_shape.ndims())) {
      CheckAgainstTheHost<T>(c, g, tol);
    }
  }
}

TEST_F(DeviceDeconvolution, DoubleMatchesTheHostLayer) {
  CheckAll<double>(1e-10);
}

TEST_F(DeviceDeconvolution, FloatMatchesTheHostLayer) { CheckAll<float>(1e-5); }

// bf16 tensors (fp32 weights): both sum in fp32 and round once, in
// different orders.
TEST_F(DeviceDeconvolution, Bf16IsWithinItsRounding) { CheckAll<bf16>(2e-2); }
TEST_F(DeviceDeconvolution, Fp16IsWithinItsRounding) { CheckAll<fp16>(4e-3); }

TEST_F(DeviceDeconvolution, ChannelSplitsFailOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks to split channels";
  Shape g = Shape::filled(4, 1);
  g[1] = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Index c = 2 * world_size();
  const DeconvDesc d = deconv(c, c, {2, 2}, {2, 2}, {0, 0}, {0, 0});
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kUnsupported, "channel",
                            [&] {
                              Deconvolution<float, DeviceSpace> layer(
                                  grid, d, Distribution(Shape{1, c, 8, 8}, g));
                            });
}

}  // namespace
}  // namespace distconv
