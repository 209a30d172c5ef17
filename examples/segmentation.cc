// Trains a 2D segmentation network in the style of LBANN's mesh-tangling
// model on a synthetic image, every tensor split over a sample x spatial
// grid (see examples/segmentation.md):
//
//   x (N, C, S, S) -> [conv3x3-BN-ReLU] x2 (W) --------------- skip ----+
//                  -> max pool 2x2 -> [conv3x3-BN-ReLU] x2 (2W)         |
//                  -> transposed conv 2x2 stride 2 (W) -> concat <------+
//                  -> conv3x3-BN-ReLU (W) -> conv1x1 (K classes)
//                  -> per-pixel cross-entropy against labels
//
// The input's channels are plane waves (their frequencies and phases vary
// with the channel and the sample); each pixel's label is the class of the
// channels' mean at that pixel (below -t, between, above t), so the labels
// follow from the input and the loss can fall. Every rank writes its own
// shard of input and labels from global indices; batch norm uses global
// statistics, so the loss curve is the same on every grid (to rounding).
//
//   mpirun -np 4 segmentation [--grid=1x1x4x1] [--size=256] [--height=H]
//       [--channels=18]
//       [--samples=2] [--width=16] [--classes=3] [--steps=10] [--lr=0.05]
//       [--momentum=0.9] [--losses=FILE] [--timeout_s=S]
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "distconv/add.h"
#include "distconv/concat.h"
#include "distconv/convolution.h"
#include "distconv/copy_shard.h"
#include "distconv/deconvolution.h"
#include "distconv/error.h"
#include "distconv/loss.h"
#include "distconv/pooling.h"
#include "distconv/redistribute.h"
#include "examples/conv_block.h"
#include "examples/training.h"
#include "perf/cli_args.h"

namespace distconv {
namespace examples {
namespace {

struct SegmentationOptions {
  Index samples = 2, channels = 18, size = 256, width = 16, classes = 3;
  Index height = 0;  // 0: size (a square image)
  TrainOptions train;
};

SegmentationOptions parse(int argc, char** argv) {
  SegmentationOptions o;
  o.train.lr = 0.05;
  parse_args(argc, argv, &o.train,
             {{"--samples=", &o.samples},
              {"--channels=", &o.channels},
              {"--size=", &o.size},
              {"--height=", &o.height},
              {"--width=", &o.width},
              {"--classes=", &o.classes}});
  if (o.height == 0) o.height = o.size;
  require(o.size % 2 == 0 && o.height % 2 == 0, ErrorKind::kInvalidArgument,
          "image ", o.height, " x ", o.size, ": both extents must be even",
          " (one 2x2 pooling and its upsampling)");
  require(o.classes >= 2, ErrorKind::kInvalidArgument, "--classes=",
          o.classes, ": at least 2");
  return o;
}

constexpr double kTwoPi = 6.283185307179586;

// Channel c of sample n at (h, w): a plane wave.
float input_value(const Shape& i, Index height, Index width) {
  const Index n = i[0], c = i[1];
  const double kh = 1 + (3 * c + n) % 4, kw = 1 + (5 * c + 2 * n) % 3;
  const double phase = 0.7 * c + 1.3 * n;
  return static_cast<float>(
      std::sin(kTwoPi * (kh * i[2] / height + kw * i[3] / width) + phase));
}

// The label at (n, 0, h, w): the class of the channels' mean there, with
// thresholds spread over (-t, t), t about one standard deviation of it.
std::int64_t label_value(const Shape& i, const SegmentationOptions& o) {
  double mean = 0;
  Shape at = i;
  for (Index c = 0; c < o.channels; ++c) {
    at[1] = c;
    mean += input_value(at, o.height, o.size);
  }
  mean /= o.channels;
  const double t = std::sqrt(0.5 / o.channels);
  const double u = (mean + t) / (2 * t);  // [0, 1] between -t and t
  const Index k = static_cast<Index>(std::floor(u * o.classes));
  return std::max<Index>(0, std::min<Index>(o.classes - 1, k));
}

ConvDesc head_conv(Index width, Index classes) {
  ConvDesc d = ConvDesc::make(width, classes, {1, 1});
  d.bias = ConvBias::kAdd;
  return d;
}

DeconvDesc upsample(Index in, Index out) {
  DeconvDesc d = DeconvDesc::make(in, out, {2, 2});
  d.stride = {2, 2};
  d.bias = ConvBias::kAdd;
  return d;
}

// The network planned on one grid, its tensors allocated from the plans.
class Network {
 public:
  Network(const ProcessGrid& grid, const SegmentationOptions& o)
      : x_dist_(Shape{o.samples, o.channels, o.height, o.size}, grid.shape()),
        enc1a_(grid, same_conv(o.channels, o.width, {3, 3}), x_dist_, 1),
        enc1b_(grid, same_conv(o.width, o.width, {3, 3}),
               enc1a_.dst_distribution(), 2),
        pool_(grid, PoolDesc::make(PoolKind::kMax, {2, 2}),
              enc1b_.dst_distribution()),
        enc2a_(grid, same_conv(o.width, 2 * o.width, {3, 3}),
               pool_.dst_layout().distribution(), 3),
        enc2b_(grid, same_conv(2 * o.width, 2 * o.width, {3, 3}),
               enc2a_.dst_distribution(), 4),
        up_(grid, upsample(2 * o.width, o.width), enc2b_.dst_distribution()),
        concat_(grid, {enc1b_.dst_distribution(), enc1b_.dst_distribution()}),
        dec_(grid, same_conv(2 * o.width, o.width, {3, 3}),
             concat_.dst_distribution(), 5),
        head_(grid, head_conv(o.width, o.classes), dec_.dst_distribution()),
        loss_(grid, LossDesc::make(LossKind::kCrossEntropyIndices),
              head_.dst_layout().distribution()),
        up_w_(upsample(2 * o.width, o.width).weights_shape().volume()),
        up_b_(o.width),
        head_w_(o.width * o.classes),
        head_b_(o.classes),
        x_(grid, enc1a_.src_layout()),
        e1a_(grid, enc1b_.src_layout()),
        skip_(grid, pool_.src_layout()),
        pooled_(grid, pool_.dst_layout()),
        pooled_halo_(grid, enc2a_.src_layout()),
        e2a_(grid, enc2b_.src_layout()),
        e2b_(grid, up_.src_layout()),
        upsampled_(grid, up_.dst_layout()),
        cat_(grid, dec_.src_layout()),
        dec_out_(grid, head_.src_layout()),
        logits_(grid, head_.dst_layout()),
        labels_(grid, loss_.target_layout()),
        d_logits_(grid, head_.diff_dst_layout()),
        d_dec_out_(grid, head_.diff_src_layout()),
        d_cat_(grid, dec_.diff_src_layout()),
        d_upsampled_(grid, up_.diff_dst_layout()),
        d_skip_(grid, pool_.diff_src_layout()),
        d_e2b_(grid, up_.diff_src_layout()),
        d_e2a_(grid, enc2b_.diff_src_layout()),
        d_pooled_(grid, enc2a_.diff_src_layout()),
        d_enc1b_out_(grid, pool_.diff_src_layout()),
        d_e1a_(grid, enc1b_.diff_src_layout()) {
    // An uneven split (50 rows over 3 ranks: 17, 17, 16) pools to 9, 8, 8
    // rows and upsamples back to 18, 16, 16: then the upsampled tensor
    // moves to the skip's split before the concatenation.
    const HaloLayout aligned(enc1b_.dst_distribution());
    if (up_.dst_layout().distribution() != aligned.distribution()) {
      realign_.emplace(grid, up_.dst_layout(), grid, aligned);
      aligned_.emplace(grid, aligned);
      d_aligned_.emplace(grid, aligned);
      d_up_plain_.emplace(grid, up_.dst_layout());
    }
    up_w_.init_uniform(std::sqrt(6.0 / (2 * o.width * 4)), 6);
    up_b_.fill(0.0f);
    head_w_.init_uniform(std::sqrt(6.0 / o.width), 7);
    head_b_.fill(0.0f);
    fill_global(x_, [&](const Shape& i) { return input_value(i, o.height, o.size);
    });
    fill_global(labels_, [&](const Shape& i) { return label_value(i, o); });
  }

  std::vector<Param*> params() {
    std::vector<Param*> all = {&up_w_, &up_b_, &head_w_, &head_b_};
    for (ConvBnRelu* b : {&enc1a_, &enc1b_, &enc2a_, &enc2b_, &dec_}) {
      for (Param* p : b->params()) all.push_back(p);
    }
    return all;
  }

  // Forward and backward; returns the loss, gradients in params().
  double step() {
    enc1a_.forward(x_, e1a_);
    enc1b_.forward(e1a_, skip_);
    pool_.forward(skip_, pooled_);
    copy_shard(pooled_, pooled_halo_);
    enc2a_.forward(pooled_halo_, e2a_);
    enc2b_.forward(e2a_, e2b_);
    up_.forward(e2b_, up_w_.value.data(), up_b_.value.data(), upsampled_);
    if (realign_) realign_->forward(upsampled_, *aligned_);
    concat_.forward({realign_ ? &*aligned_ : &upsampled_, &skip_}, cat_);
    dec_.forward(cat_, dec_out_);
    head_.forward(dec_out_, head_w_.value.data(), head_b_.value.data(),
                  logits_);
    const double loss = loss_.forward(logits_, labels_);

    loss_.backward(logits_, labels_, d_logits_);  // any layout will do
    head_.backward_weights(dec_out_, d_logits_, head_w_.grad.data(),
                           head_b_.grad.data());
    head_.backward_data(d_logits_, head_w_.value.data(), d_dec_out_);
    head_.wait_gradients();
    dec_.backward(cat_, d_dec_out_, &d_cat_);
    concat_.backward(d_cat_, {realign_ ? &*d_aligned_ : &d_upsampled_, &d_skip_});
    if (realign_) {
      realign_->backward(*d_aligned_, *d_up_plain_);
      copy_shard(*d_up_plain_, d_upsampled_);
    }
    up_.backward_weights(e2b_, d_upsampled_, up_w_.grad.data(),
                         up_b_.grad.data());
    up_.backward_data(d_upsampled_, up_w_.value.data(), d_e2b_);
    up_.wait_gradients();
    enc2b_.backward(e2a_, d_e2b_, &d_e2a_);
    enc2a_.backward(pooled_halo_, d_e2a_, &d_pooled_);
    pool_.backward(skip_, d_pooled_, d_enc1b_out_);
    add(d_enc1b_out_, d_skip_, d_enc1b_out_);  // the skip's gradient joins
    enc1b_.backward(e1a_, d_enc1b_out_, &d_e1a_);
    enc1a_.backward(x_, d_e1a_, nullptr);  // no input gradient needed
    return loss;
  }

  // This rank's blocked time since the last call.
  CommWait take_comm_wait() {
    CommWait w;
    w.take(pool_);
    w.take(up_);
    w.take(head_);
    for (ConvBnRelu* b : {&enc1a_, &enc1b_, &enc2a_, &enc2b_, &dec_}) {
      b->take_comm_wait(&w);
    }
    return w;
  }

 private:
  Distribution x_dist_;
  ConvBnRelu enc1a_, enc1b_;
  Pooling<float> pool_;
  ConvBnRelu enc2a_, enc2b_;
  Deconvolution<float> up_;
  Concat<float> concat_;
  ConvBnRelu dec_;
  Convolution<float> head_;
  Loss<float> loss_;
  Param up_w_, up_b_, head_w_, head_b_;
  DistTensor<float> x_, e1a_, skip_, pooled_, pooled_halo_, e2a_, e2b_,
      upsampled_, cat_, dec_out_, logits_;
  DistTensor<std::int64_t> labels_;
  DistTensor<float> d_logits_, d_dec_out_, d_cat_,
      d_upsampled_, d_skip_, d_e2b_, d_e2a_, d_pooled_, d_enc1b_out_, d_e1a_;
  // Set when the upsampled tensor is split unlike the skip (see above).
  std::optional<Redistribution<float>> realign_;
  std::optional<DistTensor<float>> aligned_, d_aligned_, d_up_plain_;
};

int run(int argc, char** argv) {
  const SegmentationOptions o = parse(argc, argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ProcessGrid grid(MPI_COMM_WORLD,
                   grid_or(o.train.grid, Shape{1, 1, size, 1}, 4));
  Network net(grid, o);
  if (grid.rank() == 0) {
    std::printf(
        "segmentation: %lld x %lld x %lld x %lld input, width %lld, %lld "
        "classes, grid %s (NxCxHxW), %d steps of SGD (lr %g, momentum %g)\n",
        static_cast<long long>(o.samples), static_cast<long long>(o.channels),
        static_cast<long long>(o.height), static_cast<long long>(o.size),
        static_cast<long long>(o.width), static_cast<long long>(o.classes),
        grid.shape().to_string().c_str(), o.train.steps, o.train.lr,
        o.train.momentum);
  }
  train(net, grid, o.train, o.samples);
  return 0;
}

}  // namespace
}  // namespace examples
}  // namespace distconv

int main(int argc, char** argv) {
  return distconv::examples::run_main(argc, argv, distconv::examples::run);
}
