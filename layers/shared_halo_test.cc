// One input tensor shared by several layers: allocated once with the
// widest halos its consumers need (widest()), each layer planned with it
// through its options, and every result equal to the serial reference.
#include <gtest/gtest.h>

#include <vector>

#include "layers/convolution.h"
#include "layers/deconvolution.h"
#include "layers/pooling.h"
#include "distconv/scatter_gather.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/deconv.h"
#include "kernels/reference/pool.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::spatial_grid;

ConvDesc conv(Index c, Index f, Index k, Index pad, Index dilation) {
  ConvDesc d = ConvDesc::make(c, f, {k, k});
  d.dilation = {dilation, dilation};
  d.padding_lower = d.padding_upper = {pad, pad};
  return d;
}

TEST(SharedHalos, LayersShareOneInputWithTheWidestHalos) {
  ProcessGrid grid(MPI_COMM_WORLD, spatial_grid(4));
  const Shape x_shape{2, 3, 13, 11};
  const Distribution dist(x_shape, grid.shape());
  const ConvDesc a = conv(3, 2, 3, 1, 1);  // halo 1
  const ConvDesc b = conv(3, 4, 3, 2, 2);  // dilation 2: halo 2
  PoolDesc p = PoolDesc::make(PoolKind::kMax, {3, 3});
  p.stride = {2, 2};
  p.padding_lower = p.padding_upper = {1, 1};
  // Plan once for the layouts, then again with the widest.
  const HaloLayout both =
      widest(widest(Convolution<double>(grid, a, dist).src_layout(),
                    Convolution<double>(grid, b, dist).src_layout()),
             Pooling<double>(grid, p, dist).src_layout());
  ConvolutionOptions co;
  co.src_layout = both;
  PoolingOptions po;
  po.haloed_layout = both;
  Convolution<double> ca(grid, a, dist, co), cb(grid, b, dist, co);
  Pooling<double> pool(grid, p, dist, po);
  ASSERT_EQ(ca.src_layout(), both);
  ASSERT_EQ(pool.src_layout(), both);

  const auto x = random_vector<double>(x_shape.volume(), 1);
  const auto wa = random_vector<double>(a.weights_shape().volume(), 2);
  const auto wb = random_vector<double>(b.weights_shape().volume(), 3);
  DistTensor<double> xt(grid, both);  // one tensor for all three
  scatter(x.data(), xt, 0);
  DistTensor<double> ya(grid, ca.dst_layout()), yb(grid, cb.dst_layout());
  DistTensor<double> yp(grid, pool.dst_layout());
  ca.forward(xt, wa.data(), nullptr, ya);
  cb.forward(xt, wb.data(), nullptr, yb);
  pool.forward(xt, yp);
  const Shape sa = a.dst_shape(x_shape), sb = b.dst_shape(x_shape);
  const Shape sp = p.dst_shape(x_shape);
  std::vector<double> ga(sa.volume()), gb(sb.volume()), gp(sp.volume());
  gather(ya, ga.data(), 0);
  gather(yb, gb.data(), 0);
  gather(yp, gp.data(), 0);
  if (grid.rank() != 0) return;
  std::vector<double> ra(ga.size()), rb(gb.size()), rp(gp.size());
  reference::conv_fwd(a, x_shape, x.data(), wa.data(), nullptr, sa, ra.data());
  reference::conv_fwd(b, x_shape, x.data(), wb.data(), nullptr, sb, rb.data());
  reference::pool_fwd<double>(p, x_shape, x.data(), sp, rp.data());
  EXPECT_LE(max_relative_error(ga, ra), 1e-12);
  EXPECT_LE(max_relative_error(gb, rb), 1e-12);
  EXPECT_LE(max_relative_error(gp, rp), 1e-12);
}

// A transposed convolution writing straight into the input tensor of the
// convolution after it: its output layout widened to the convolution's.
TEST(SharedHalos, TransposedConvolutionWritesTheNextConvolutionsInput) {
  ProcessGrid grid(MPI_COMM_WORLD, spatial_grid(4));
  const Shape x_shape{1, 2, 5, 6};
  const Distribution dist(x_shape, grid.shape());
  DeconvDesc up = DeconvDesc::make(2, 3, {2, 2});
  up.stride = {2, 2};
  const Deconvolution<double> first(grid, up, dist);
  const Distribution mid = first.dst_layout().distribution();
  const ConvDesc next = conv(3, 2, 5, 2, 1);  // halo 2 > the deconv's 0
  const HaloLayout both = widest(
      first.dst_layout(), Convolution<double>(grid, next, mid).src_layout());
  DeconvolutionOptions uo;
  uo.haloed_layout = both;
  ConvolutionOptions co;
  co.src_layout = both;
  Deconvolution<double> deconv(grid, up, dist, uo);
  Convolution<double> c(grid, next, mid, co);
  const auto x = random_vector<double>(x_shape.volume(), 4);
  const auto wu = random_vector<double>(up.weights_shape().volume(), 5);
  const auto wc = random_vector<double>(next.weights_shape().volume(), 6);
  DistTensor<double> xt(grid, deconv.src_layout()), mt(grid, both);
  DistTensor<double> yt(grid, c.dst_layout());
  scatter(x.data(), xt, 0);
  mt.buffer().for_each([](const Shape&, double& v) { v = 1e6; });
  deconv.forward(xt, wu.data(), nullptr, mt);
  c.forward(mt, wc.data(), nullptr, yt);
  const Shape ms = up.dst_shape(x_shape), ys = next.dst_shape(ms);
  std::vector<double> y(ys.volume());
  gather(yt, y.data(), 0);
  if (grid.rank() != 0) return;
  std::vector<double> m(ms.volume()), y_ref(ys.volume());
  reference::deconv_fwd(up, x_shape, x.data(), wu.data(), nullptr, ms,
                        m.data());
  reference::conv_fwd(next, ms, m.data(), wc.data(), nullptr, ys, y_ref.data());
  EXPECT_LE(max_relative_error(y, y_ref), 1e-12);
}

TEST(SharedHalos, ALayoutThatDoesNotCoverFailsOnEveryRank) {
  ProcessGrid grid(MPI_COMM_WORLD, spatial_grid(4));
  const Distribution dist(Shape{1, 3, 12, 12}, grid.shape());
  const ConvDesc c = conv(3, 3, 3, 1, 1);
  ConvolutionOptions o;
  // Wide enough, but stored channels-first: not the same tensor.
  o.src_layout = HaloLayout(dist, HaloWidths::symmetric({0, 0, 2, 2}));
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "does not cover the halos",
      [&] { Convolution<float>(grid, c, dist, o); });
  if (testing::world_size() > 1) {  // one rank needs no halo at all
    o.src_layout = HaloLayout(dist).with_storage(StorageOrder::kChannelsLast);
    testing::expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "does not cover the halos",
        [&] { Convolution<float>(grid, c, dist, o); });
  }
}

}  // namespace
}  // namespace distconv
