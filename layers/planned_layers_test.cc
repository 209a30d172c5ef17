// Layers built from plans made beforehand (plan_convolution, plan_pooling,
// plan_deconvolution, plan_batch_norm, and the shard-local layers' plans in
// shard_plan.h): they run as the layers that plan for themselves do, bit
// for bit; a plan made for another rank, grid or description throws the
// same distconv::Error on every rank.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "distconv/scatter_gather.h"
#include "layers/activation.h"
#include "layers/batch_norm.h"
#include "layers/concat.h"
#include "layers/convolution.h"
#include "layers/deconvolution.h"
#include "layers/loss.h"
#include "layers/pooling.h"
#include "layers/softmax.h"
#include "layers/upsample.h"
#include "tests/conv_check.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::world_size;

// An uneven split of H over every rank.
Distribution src_over(const ProcessGrid& grid, Index channels) {
  return Distribution(Shape{2, channels, 5 * grid.shape()[2] + 1, 7},
                      grid.shape());
}

// The global output of `forward` on the same input in both layers.
template <typename Layer, typename Forward>
void expect_same_outputs(const ProcessGrid& grid, Layer& own, Layer& given,
                         Forward forward) {
  const Shape x_shape = own.src_layout().distribution().global_shape();
  const auto x = random_vector<double>(x_shape.volume(), 7);
  std::vector<std::vector<double>> y;
  for (Layer* layer : {&own, &given}) {
    DistTensor<double> xt(grid, layer->src_layout());
    DistTensor<double> yt(grid, layer->dst_layout());
    scatter(x.data(), xt, 0);
    forward(*layer, xt, yt);
    y.push_back(gathered(yt));
  }
  EXPECT_EQ(y[0], y[1]);
}

TEST(PlannedLayers, RunAsTheLayersOwnPlans) {
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const int rank = grid.rank();

  ConvDesc conv = ConvDesc::make(4, 3, {3, 3});
  conv.padding_lower = conv.padding_upper = {1, 1};
  const Distribution x4 = src_over(grid, 4);
  Convolution<double> c_own(grid, conv, x4);
  Convolution<double> c_given(grid, plan_convolution(conv, x4, rank));
  EXPECT_EQ(c_given.plan(), c_own.plan());
  const auto w = random_vector<double>(conv.weights_shape().volume(), 2);
  expect_same_outputs(grid, c_own, c_given, [&](auto& l, auto& x, auto& y) {
    l.forward(x, w.data(), nullptr, y);
  });

  PoolDesc pool = PoolDesc::make(PoolKind::kMax, {3, 3});
  pool.padding_lower = pool.padding_upper = {1, 1};
  pool.stride = {2, 2};
  Pooling<double> p_own(grid, pool, x4);
  Pooling<double> p_given(grid, plan_pooling(pool, x4, rank));
  EXPECT_EQ(p_given.plan(), p_own.plan());
  EXPECT_EQ(p_given.describe(), p_own.describe());
  expect_same_outputs(grid, p_own, p_given,
                      [](auto& l, auto& x, auto& y) { l.forward(x, y); });

  DeconvDesc up = DeconvDesc::make(4, 2, {4, 4});
  up.stride = {2, 2};
  up.padding_lower = up.padding_upper = {1, 1};
  Deconvolution<double> d_own(grid, up, x4);
  Deconvolution<double> d_given(grid, plan_deconvolution(up, x4, rank));
  EXPECT_EQ(d_given.plan(), d_own.plan());
  const auto wu = random_vector<double>(up.weights_shape().volume(), 3);
  expect_same_outputs(grid, d_own, d_given, [&](auto& l, auto& x, auto& y) {
    l.forward(x, wu.data(), nullptr, y);
  });

  BatchNormOptions stats;
  stats.stats = BatchNormStats::kSampleBlock;
  BatchNorm<double> b_own(grid, x4, stats);
  BatchNorm<double> b_given(grid, plan_batch_norm(x4, rank, stats));
  EXPECT_EQ(b_given.plan(), b_own.plan());
  EXPECT_EQ(b_given.describe(), b_own.describe());
  const std::vector<double> scale = {1, 2, 3, 4}, shift = {0, 1, 0, -1};
  expect_same_outputs(grid, b_own, b_given, [&](auto& l, auto& x, auto& y) {
    l.forward(x, scale.data(), shift.data(), y);
  });

  const auto forward = [](auto& l, auto& x, auto& y) { l.forward(x, y); };
  const UpsampleDesc twice{Shape{2, 2}};
  Upsample<double> u_own(grid, twice, x4);
  Upsample<double> u_given(grid, twice, plan_upsample(twice, x4, rank));
  EXPECT_EQ(u_given.plan(), u_own.plan());
  expect_same_outputs(grid, u_own, u_given, forward);

  Softmax<double> s_own(grid, x4);
  Softmax<double> s_given(grid, plan_softmax(x4, rank));
  EXPECT_EQ(s_given.plan(), s_own.plan());
  expect_same_outputs(grid, s_own, s_given, forward);

  const ChannelRange middle{1, 3};
  Slice<double> sl_own(grid, middle, x4);
  Slice<double> sl_given(grid, middle, plan_slice(middle, x4, rank));
  EXPECT_EQ(sl_given.plan(), sl_own.plan());
  expect_same_outputs(grid, sl_own, sl_given, forward);

  const Distribution x2 = src_over(grid, 2);
  Concat<double> cat_own(grid, {x4, x2});
  Concat<double> cat_given(grid, plan_concat({x4, x2}, rank));
  EXPECT_EQ(cat_given.plan(), cat_own.plan());
  EXPECT_EQ(cat_given.channels(1).begin, 4);

  Activation<double> a_own(grid, ActivationDesc::relu(), x4);
  Activation<double> a_given(grid, ActivationDesc::relu(),
                             plan_activation(ActivationDesc::relu(), x4, rank));
  EXPECT_EQ(a_given.plan(), a_own.plan());

  const LossDesc ce = LossDesc::make(LossKind::kCrossEntropyIndices);
  Loss<double> l_own(grid, ce, x4);
  Loss<double> l_given(grid, ce, plan_loss(ce, x4, rank));
  EXPECT_EQ(l_given.plan(), l_own.plan());
  EXPECT_EQ(l_given.first_sample(), l_own.first_sample());
}

TEST(PlannedLayers, APlanForAnotherRankOrGridFailsOnEveryRank) {
  const int n = world_size();
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  const MPI_Comm comm = MPI_COMM_WORLD;
  const Distribution x = src_over(grid, 4);
  // Rank 0 holds the plan of the last rank; the others their own.
  const int planned = grid.rank() == 0 ? n - 1 : grid.rank();
  const ConvDesc conv = ConvDesc::make(4, 4, {3, 3});
  const PoolDesc pool = PoolDesc::make(PoolKind::kMax, {2, 2});
  const DeconvDesc up = DeconvDesc::make(4, 4, {2, 2});
  // Each layer built from its plan for (distribution, rank).
  const std::vector<std::function<void(const Distribution&, int)>> layers = {
      [&](const Distribution& d, int r) {
        Convolution<float>(grid, plan_convolution(conv, d, r));
      },
      [&](const Distribution& d, int r) {
        Pooling<float>(grid, plan_pooling(pool, d, r));
      },
      [&](const Distribution& d, int r) {
        Deconvolution<float>(grid, plan_deconvolution(up, d, r));
      },
      [&](const Distribution& d, int r) {
        BatchNorm<float>(grid, plan_batch_norm(d, r));
      },
      [&](const Distribution& d, int r) {
        Upsample<float>(grid, UpsampleDesc{Shape{2, 2}},
                        plan_upsample(UpsampleDesc{Shape{2, 2}}, d, r));
      },
      [&](const Distribution& d, int r) {
        Activation<float>(grid, ActivationDesc::relu(),
                          plan_activation(ActivationDesc::relu(), d, r));
      },
      [&](const Distribution& d, int r) {
        Softmax<float>(grid, plan_softmax(d, r));
      },
      [&](const Distribution& d, int r) {
        Concat<float>(grid, plan_concat({d, d}, r));
      },
      [&](const Distribution& d, int r) {
        Slice<float>(grid, {0, 2}, plan_slice({0, 2}, d, r));
      },
      [&](const Distribution& d, int r) {
        const LossDesc mse = LossDesc::make(LossKind::kMeanSquaredError);
        Loss<float>(grid, mse, plan_loss(mse, d, r));
      },
  };
  // A plan over a grid of another shape.
  const Distribution other(Shape{2, 4, 9, 8 * n}, Shape{1, 1, 1, n + 1});
  for (const auto& layer : layers) {
    if (n > 1) {
      testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                         "plan for rank",
                                         [&] { layer(x, planned); });
    }
    testing::expect_error_on_all_ranks(comm, ErrorKind::kGridMismatch,
                                       "planned input",
                                       [&] { layer(other, grid.rank()); });
  }
  // A plan made for another description than the one given with it.
  const std::vector<std::function<void()>> mismatched = {
      [&] {
        Upsample<float>(
            grid, UpsampleDesc{Shape{2, 3}},
            plan_upsample(UpsampleDesc{Shape{2, 2}}, x, grid.rank()));
      },
      [&] {
        Softmax<float>(grid, plan_softmax(x, grid.rank()),
                       {SoftmaxKind::kLogSoftmax});
      },
      [&] {
        Slice<float>(grid, {1, 2}, plan_slice({0, 2}, x, grid.rank()));
      },
      [&] {
        Activation<float>(
            grid, ActivationDesc::leaky_relu(0.1),
            plan_activation(ActivationDesc::relu(), x, grid.rank()));
      },
  };
  for (const auto& layer : mismatched) {
    testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                       "was not made for the description",
                                       layer);
  }
}

}  // namespace
}  // namespace distconv
