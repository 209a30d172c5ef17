// A small U-Net-like network, every tensor split in space (and samples):
//   conv -> batch norm -> ReLU -> max pool -> conv -> transposed conv
//        -> concat (with the ReLU output, a skip connection) -> conv
//        -> cross-entropy loss,
// forward and backward, then an SGD step and another forward and backward.
// On every grid of all ranks that keeps channels whole, the loss and every
// gradient (parameters and the input's) equal those of the same network on
// one process, in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "layers/activation.h"
#include "layers/add.h"
#include "layers/batch_norm.h"
#include "layers/concat.h"
#include "layers/convolution.h"
#include "layers/copy_shard.h"
#include "layers/deconvolution.h"
#include "layers/loss.h"
#include "layers/pooling.h"
#include "distconv/scatter_gather.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using T = double;
constexpr Index kSamples = 2, kChannels = 3, kSize = 16, kClasses = 3;
constexpr Index kWidth = 4, kDeep = 6;  // channels after conv1 and conv2

ConvDesc same3x3(Index c, Index f) {
  ConvDesc d = ConvDesc::make(c, f, {3, 3});
  d.padding_lower = d.padding_upper = {1, 1};
  d.bias = ConvBias::kAdd;
  return d;
}

PoolDesc pool2x2() { return PoolDesc::make(PoolKind::kMax, {2, 2}); }

// 4x4 stride 2 padding 1: each input cell reaches a 4x4 patch, so outputs
// at shard edges get contributions from neighbours (the reverse halo
// exchange).
DeconvDesc up4x4() {
  DeconvDesc d = DeconvDesc::make(kDeep, kWidth, {4, 4});
  d.stride = {2, 2};
  d.padding_lower = d.padding_upper = {1, 1};
  d.bias = ConvBias::kAdd;
  return d;
}

// Every parameter, in one order, and their gradients.
struct Params {
  std::vector<T> w1, b1, scale, shift, w2, b2, wu, bu, w3, b3;
  std::vector<std::vector<T>*> all() {
    return {&w1, &b1, &scale, &shift, &w2, &b2, &wu, &bu, &w3, &b3};
  }
};

Params initial_params() {
  Params p;
  unsigned seed = 10;
  auto init = [&](std::vector<T>* v, Index n) {
    *v = random_vector<T>(n, seed++);
  };
  init(&p.w1, same3x3(kChannels, kWidth).weights_shape().volume());
  init(&p.b1, kWidth);
  p.scale.assign(kWidth, 1.0);
  init(&p.shift, kWidth);
  init(&p.w2, same3x3(kWidth, kDeep).weights_shape().volume());
  init(&p.b2, kDeep);
  init(&p.wu, up4x4().weights_shape().volume());
  init(&p.bu, kWidth);
  init(&p.w3, same3x3(2 * kWidth, kClasses).weights_shape().volume());
  init(&p.b3, kClasses);
  return p;
}

struct StepResult {
  double loss = 0;
  Params grads;
  std::vector<T> dx;  // gathered on rank 0
};

// The network planned on one grid; tensors allocated once from the plans.
// The ReLU writes straight into the pooling's input layout (halos
// included), which the concatenation reads too; where a layer's output
// layout is not the next one's input layout, copy_shard moves the shards.
class Network {
 public:
  explicit Network(const ProcessGrid& grid)
      : grid_(grid),
        x_dist_(Shape{kSamples, kChannels, kSize, kSize}, grid.shape()),
        conv1_(grid, same3x3(kChannels, kWidth), x_dist_),
        c1_dist_(conv1_.dst_layout().distribution()),
        bn_(grid, c1_dist_),
        relu_(grid, ActivationDesc::relu(), c1_dist_),
        pool_(grid, pool2x2(), c1_dist_),
        conv2_(grid, same3x3(kWidth, kDeep), pool_.dst_layout().distribution()),
        deconv_(grid, up4x4(), conv2_.dst_layout().distribution()),
        concat_(grid, {deconv_.dst_layout().distribution(), c1_dist_}),
        conv3_(grid, same3x3(2 * kWidth, kClasses), concat_.dst_distribution()),
        loss_(grid, LossDesc::make(LossKind::kCrossEntropyIndices),
              conv3_.dst_layout().distribution()),
        x_(grid, conv1_.src_layout()),
        c1_(grid, conv1_.dst_layout()),
        bn_out_(grid, bn_.dst_layout()),
        r_(grid, pool_.src_layout()),
        p_(grid, pool_.dst_layout()),
        p2_(grid, conv2_.src_layout()),
        c2_(grid, conv2_.dst_layout()),
        u_(grid, deconv_.dst_layout()),
        cat_(grid, conv3_.src_layout()),
        c3_(grid, conv3_.dst_layout()),
        target_(grid, loss_.target_layout()),
        dc3_(grid, conv3_.diff_dst_layout()),
        dcat_(grid, conv3_.diff_src_layout()),
        du_(grid, deconv_.diff_dst_layout()),
        dskip_(grid, bn_.dst_layout()),
        dc2_(grid, deconv_.diff_src_layout()),
        dc2h_(grid, conv2_.diff_dst_layout()),
        dp2_(grid, conv2_.diff_src_layout()),
        dr_(grid, pool_.diff_src_layout()),
        dbn_(grid, bn_.diff_dst_layout()),
        dc1_(grid, bn_.diff_src_layout()),
        dc1h_(grid, conv1_.diff_dst_layout()),
        dx_(grid, conv1_.diff_src_layout()) {}

  void scatter_inputs(const std::vector<T>& x,
                      const std::vector<std::int64_t>& labels) {
    scatter(x.data(), x_, 0);
    scatter(labels.data(), target_, 0);
  }

  StepResult step(Params& p) {
    StepResult r;
    // Forward.
    conv1_.forward(x_, p.w1.data(), p.b1.data(), c1_);
    bn_.forward(c1_, p.scale.data(), p.shift.data(), bn_out_);
    relu_.forward(bn_out_, r_);
    pool_.forward(r_, p_);
    copy_shard(p_, p2_);
    conv2_.forward(p2_, p.w2.data(), p.b2.data(), c2_);
    deconv_.forward(c2_, p.wu.data(), p.bu.data(), u_);
    concat_.forward({&u_, &r_}, cat_);
    conv3_.forward(cat_, p.w3.data(), p.b3.data(), c3_);
    r.loss = loss_.forward(c3_, target_);
    // Backward.
    Params& g = r.grads;
    for (size_t i = 0; i < g.all().size(); ++i) {
      g.all()[i]->resize(p.all()[i]->size());
    }
    loss_.backward(c3_, target_, dc3_);
    conv3_.backward_weights(cat_, dc3_, g.w3.data(), g.b3.data());
    conv3_.backward_data(dc3_, p.w3.data(), dcat_);
    conv3_.wait_gradients();
    concat_.backward(dcat_, {&du_, &dskip_});
    deconv_.backward_weights(c2_, du_, g.wu.data(), g.bu.data());
    deconv_.backward_data(du_, p.wu.data(), dc2_);
    deconv_.wait_gradients();
    copy_shard(dc2_, dc2h_);
    conv2_.backward_weights(p2_, dc2h_, g.w2.data(), g.b2.data());
    conv2_.backward_data(dc2h_, p.w2.data(), dp2_);
    conv2_.wait_gradients();
    pool_.backward(r_, dp2_, dr_);
    add(dr_, dskip_, dr_);  // the skip connection's gradient joins
    relu_.backward(bn_out_, dr_, dbn_);
    bn_.backward(c1_, dbn_, p.scale.data(), dc1_, g.scale.data(),
                 g.shift.data());
    copy_shard(dc1_, dc1h_);
    conv1_.backward_weights(x_, dc1h_, g.w1.data(), g.b1.data());
    conv1_.backward_data(dc1h_, p.w1.data(), dx_);
    conv1_.wait_gradients();
    r.dx.resize(grid_.rank() == 0 ? x_dist_.global_shape().volume() : 0);
    gather(dx_, r.dx.data(), 0);
    return r;
  }

 private:
  const ProcessGrid& grid_;
  Distribution x_dist_;
  Convolution<T> conv1_;
  Distribution c1_dist_;
  BatchNorm<T> bn_;
  Activation<T> relu_;
  Pooling<T> pool_;
  Convolution<T> conv2_;
  Deconvolution<T> deconv_;
  Concat<T> concat_;
  Convolution<T> conv3_;
  Loss<T> loss_;
  DistTensor<T> x_, c1_, bn_out_, r_, p_, p2_, c2_, u_, cat_, c3_;
  DistTensor<std::int64_t> target_;
  DistTensor<T> dc3_, dcat_, du_, dskip_, dc2_, dc2h_, dp2_, dr_, dbn_, dc1_,
      dc1h_, dx_;
};

// Two training steps (forward, backward, SGD update) on `grid`.
std::vector<StepResult> train(const ProcessGrid& grid, const std::vector<T>& x,
                              const std::vector<std::int64_t>& labels) {
  Network net(grid);
  net.scatter_inputs(x, labels);
  Params p = initial_params();
  std::vector<StepResult> steps;
  for (int s = 0; s < 2; ++s) {
    steps.push_back(net.step(p));
    for (size_t i = 0; i < p.all().size(); ++i) {
      std::vector<T>& w = *p.all()[i];
      const std::vector<T>& dw = *steps.back().grads.all()[i];
      for (size_t j = 0; j < w.size(); ++j) w[j] -= 0.1 * dw[j];
    }
  }
  return steps;
}

TEST(SmallNetwork, LossAndGradientsMatchOneProcessOnEveryGrid) {
  const Shape x_shape{kSamples, kChannels, kSize, kSize};
  const std::vector<T> x = random_vector<T>(x_shape.volume(), 1);
  std::vector<std::int64_t> labels(kSamples * kSize * kSize);
  for (size_t i = 0; i < labels.size(); ++i) {
    labels[i] = static_cast<std::int64_t>((i * 7 + i / 5) % kClasses);
  }
  std::vector<StepResult> serial;
  if (testing::world_rank() == 0) {
    ProcessGrid self(MPI_COMM_SELF, Shape{1, 1, 1, 1});
    serial = train(self, x, labels);
    ASSERT_TRUE(std::isfinite(serial[1].loss));
    ASSERT_LT(serial[1].loss, serial[0].loss) << "SGD should lower the loss";
  }
  for (const Shape& shape : testing::grids_without_channel_split(4)) {
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    SCOPED_TRACE("grid " + shape.to_string());
    std::vector<StepResult> dist = train(grid, x, labels);
    if (grid.rank() != 0) continue;
    for (int s = 0; s < 2; ++s) {
      SCOPED_TRACE("step " + std::to_string(s));
      EXPECT_NEAR(dist[s].loss, serial[s].loss,
                  1e-12 * std::abs(serial[s].loss));
      Params& want = serial[s].grads;
      Params& got = dist[s].grads;
      const char* names[] = {"w1", "b1", "scale", "shift", "w2",
                             "b2", "wu", "bu",    "w3",    "b3"};
      for (size_t i = 0; i < want.all().size(); ++i) {
        if (want.all()[i] == &want.b1) continue;
        EXPECT_LE(max_relative_error(*got.all()[i], *want.all()[i]), 1e-10)
            << names[i];
      }
      // Batch norm (global statistics) removes any per-channel constant,
      // so conv1's bias has no effect on the loss: its gradient is zero up
      // to rounding, on one process and distributed alike.
      double largest = 0;
      for (T v : want.w1) largest = std::max(largest, std::abs(double(v)));
      for (size_t c = 0; c < want.b1.size(); ++c) {
        EXPECT_LE(std::abs(want.b1[c]), 1e-12 * largest) << "b1, one process";
        EXPECT_LE(std::abs(got.b1[c]), 1e-12 * largest) << "b1";
      }
      EXPECT_LE(max_relative_error(dist[s].dx, serial[s].dx), 1e-10) << "dx";
    }
  }
}

}  // namespace
}  // namespace distconv
