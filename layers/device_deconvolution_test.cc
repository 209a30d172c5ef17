// Deconvolution<T, DeviceSpace> against Deconvolution<T> (host memory) on
// the same data and on every grid of the ranks that splits samples and
// space (uneven and empty shards): forward (halo contributions summed home,
// bias added), backward-data and backward-weights (the gradients summed
// over the ranks), 2D and 3D, stride, dilation, asymmetric and circular
// padding, output padding, groups, kernels smaller than the stride (cells
// no input reaches), twice each (the plan is reused). fp64 to 1e-10, fp32
// to 1e-5. Several ranks share one GPU (halos host-staged). A grid
// splitting channels throws on every rank. Skips, visibly, on a machine
// without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/deconvolution.h"
#include "layers/device_layer_testing.h"
#include "tests/device_array.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::DeviceArray;
using testing::expect_close;
using testing::expect_error_on_all_ranks;
using testing::expect_same_interior;
using testing::world_rank;
using testing::world_size;

class DeviceDeconvolution : public testing::DeviceLayerTest {};

struct Case {
  std::string name;
  DeconvDesc desc;
  Shape src_shape;
};

DeconvDesc deconv(Index c, Index f, Shape k, Shape s, Shape pl, Shape pu,
                  ConvBias bias = ConvBias::kNone) {
  DeconvDesc d = DeconvDesc::make(c, f, k);
  d.stride = s;
  d.padding_lower = pl;
  d.padding_upper = pu;
  d.bias = bias;
  return d;
}

std::vector<Case> cases() {
  const ConvBias kB = ConvBias::kAdd;
  DeconvDesc op = deconv(3, 2, {3, 3}, {2, 2}, {1, 1}, {1, 1}, kB);
  op.output_padding = {1, 0};
  DeconvDesc dil = deconv(2, 3, {3, 2}, {2, 1}, {2, 0}, {1, 1}, kB);
  dil.dilation = {2, 3};
  DeconvDesc grouped = deconv(4, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  grouped.groups = 2;
  DeconvDesc circular = deconv(3, 2, {4, 4}, {2, 2}, {1, 1}, {1, 1}, kB);
  circular.padding_mode = {PaddingMode::kCircular, PaddingMode::kCircular};
  return {
      {"unet_4x4_stride2_pad1",
       deconv(3, 2, {4, 4}, {2, 2}, {1, 1}, {1, 1}),
       {2, 3, 5, 6}},
      {"unet_circular", circular, {1, 3, 5, 6}},
      {"3x3_stride1_same_bias",
       deconv(2, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1}, kB),
       {2, 2, 7, 6}},
      {"3x3_stride2_output_padding", op, {1, 3, 5, 6}},
      {"kernel_smaller_than_stride_leaves_gaps",
       deconv(2, 2, {2, 1}, {3, 2}, {0, 0}, {0, 0}, kB),
       {1, 2, 4, 5}},
      {"asymmetric_padding_dilation", dil, {1, 2, 6, 5}},
      {"groups", grouped, {1, 4, 4, 5}},
      {"3d_2x2x2_stride2_bias",
       deconv(2, 2, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, kB),
       {1, 2, 3, 4, 3}},
  };
}

template <typename T>
void CheckAgainstTheHost(const Case& c, const Shape& g, double tol) {
  SCOPED_TRACE(::testing::Message() << c.name << " on grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(c.src_shape, g);
  Deconvolution<T> host(grid, c.desc, dist);
  Deconvolution<T, DeviceSpace> dev(grid, c.desc, dist);
  std::mt19937_64 rng(23 + world_rank());
  std::uniform_real_distribution<double> val(-1, 1);
  auto random = [&](Index n) {
    std::vector<T> v(n);
    for (T& x : v) x = val(rng);
    return v;
  };
  DistTensor<T> x(grid, host.src_layout()), y(grid, host.dst_layout());
  DistTensor<T> dy(grid, host.diff_dst_layout()),
      dx(grid, host.diff_src_layout());
  const bool has_bias = c.desc.bias == ConvBias::kAdd;
  // Weights and bias the same on every rank.
  std::mt19937_64 shared(7);
  std::vector<T> w(c.desc.weights_shape().volume()),
      b(has_bias ? c.desc.out_channels : 0);
  for (T& v : w) v = val(shared);
  for (T& v : b) v = val(shared);
  DeviceArray<T> wd(w), bd(b);
  DistTensor<T, DeviceSpace> xd(grid, dev.src_layout()),
      yd(grid, dev.dst_layout()), dyd(grid, dev.diff_dst_layout()),
      dxd(grid, dev.diff_src_layout());
  for (int round = 0; round < 2; ++round) {
    x.interior().for_each([&](const Shape&, T& v) { v = val(rng); });
    dy.interior().for_each([&](const Shape&, T& v) { v = val(rng); });
    DeviceSpace::copy_to_device(xd.data(), x.data(), sizeof(T) * x.size());
    DeviceSpace::copy_to_device(dyd.data(), dy.data(), sizeof(T) * dy.size());
    std::vector<T> dw(w.size(), T(5)), db(b.size(), T(5));
    DeviceArray<T> dwd(dw), dbd(db);
    host.forward(x, w.data(), has_bias ? b.data() : nullptr, y);
    dev.forward(xd, wd.data, has_bias ? bd.data : nullptr, yd);
    host.backward_weights(x, dy, dw.data(), has_bias ? db.data() : nullptr);
    dev.backward_weights(xd, dyd, dwd.data, has_bias ? dbd.data : nullptr);
    host.backward_data(dy, w.data(), dx);
    dev.backward_data(dyd, wd.data, dxd);
    host.wait_gradients();
    dev.wait_gradients();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    expect_same_interior(y, yd, tol, "forward");
    expect_same_interior(dx, dxd, tol, "backward data");
    expect_close(dwd.read(), dw, tol, "weight gradient");
    if (has_bias) expect_close(dbd.read(), db, tol, "bias gradient");
  }
}

template <typename T>
void CheckAll(double tol) {
  for (const Case& c : cases()) {
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
