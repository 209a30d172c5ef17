// The segmentation example's network (examples/segmentation.cc,
// examples/segmentation.md) in host or device memory (float, bf16), and
// its synthetic data: plane waves and the class of their mean at each
// pixel.
//
//   SegmentationNet<float> net(grids, shape);          // host memory
//   SegmentationNet<float, DeviceSpace> gpu(grids, shape);
//   train(net, net.loss_grid(), options, shape.samples);
#ifndef DISTCONV_EXAMPLES_SEGMENTATION_NET_H_
#define DISTCONV_EXAMPLES_SEGMENTATION_NET_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "examples/conv_block.h"
#include "examples/move.h"
#include "examples/networks.h"
#include "examples/training.h"
#include "examples/unit_grids.h"
#include "io/h5_file.h"
#include "layers/add.h"
#include "layers/concat.h"
#include "layers/convolution.h"
#include "layers/copy_shard.h"
#include "layers/deconvolution.h"
#include "layers/loss.h"
#include "layers/pooling.h"

namespace distconv {
namespace examples {

inline constexpr double kSegmentationTwoPi = 6.283185307179586;

// Channel c of sample n at (h, w): a plane wave.
inline float segmentation_input(const Shape& i, Index height, Index width) {
  const Index n = i[0], c = i[1];
  const double kh = 1 + (3 * c + n) % 4, kw = 1 + (5 * c + 2 * n) % 3;
  const double phase = 0.7 * c + 1.3 * n;
  return static_cast<float>(std::sin(
      kSegmentationTwoPi * (kh * i[2] / height + kw * i[3] / width) + phase));
}

// The label at (n, 0, h, w): the class of the channels' mean there, with
// thresholds spread over (-t, t), t about one standard deviation of it.
inline std::int64_t segmentation_label(const Shape& i,
                                       const SegmentationShape& o) {
  double mean = 0;
  Shape at = i;
  for (Index c = 0; c < o.channels; ++c) {
    at[1] = c;
    mean += segmentation_input(at, o.height, o.size);
  }
  mean /= o.channels;
  const double t = std::sqrt(0.5 / o.channels);
  const double u = (mean + t) / (2 * t);  // [0, 1] between -t and t
  const Index k = static_cast<Index>(std::floor(u * o.classes));
  return std::max<Index>(0, std::min<Index>(o.classes - 1, k));
}

inline HaloLayout plain(const Distribution& d) {
  return HaloLayout(d).with_storage(StorageOrder::kChannelsLast);
}

// The network planned on its units' grids (examples/networks.h): level 1
// on grids[kLevel1], level 2 on grids[kLevel2], the decoder on
// grids[kDecoder], its tensors allocated from the plans. Where units'
// grids differ, Moves carry level 1's output to level 2 and to the
// decoder (the skip), level 2's output to the decoder, and the gradients
// back. The decoder keeps the skip's split when it shares level 1's grid.
template <typename T, typename Space = HostSpace>
class SegmentationNet {
 public:
  // What its checkpoints belong to (the shape's describe()).
  const std::string& description() const { return description_; }
  SegmentationNet(const UnitGrids& grids, const SegmentationShape& o)
      : description_(o.describe()),
        g1_(grids[kLevel1]),
        g2_(grids[kLevel2]),
        g3_(grids[kDecoder]),
        same12_(grids.same(kLevel1, kLevel2)),
        same13_(grids.same(kLevel1, kDecoder)),
        enc1a_(g1_, same_conv(o.channels, o.width, {3, 3}, o.padding_mode),
               Distribution(o.input(), g1_.shape()), 1, o.kernels, o.bn_relu),
        enc1b_(g1_, same_conv(o.width, o.width, {3, 3}, o.padding_mode),
               enc1a_.dst_distribution(), 2, o.kernels, o.bn_relu),
        pool_(g2_, PoolDesc::make(PoolKind::kMax, {2, 2}),
              grids.arriving(enc1b_.dst_distribution(), kLevel1, kLevel2),
              pooling_with_kernels<Space>(o.kernels)),
        enc2a_(g2_, same_conv(o.width, 2 * o.width, {3, 3}, o.padding_mode),
               pool_.dst_layout().distribution(), 3, o.kernels, o.bn_relu),
        enc2b_(g2_, same_conv(2 * o.width, 2 * o.width, {3, 3}, o.padding_mode),
               enc2a_.dst_distribution(), 4, o.kernels, o.bn_relu),
        up_(g2_, segmentation_upsample(2 * o.width, o.width),
            enc2b_.dst_distribution(),
            with_kernels<DeconvolutionOptions, Space>(o.kernels)),
        cat_in_(plain(
            grids.arriving(enc1b_.dst_distribution(), kLevel1, kDecoder))),
        concat_(g3_, {cat_in_.distribution(), cat_in_.distribution()}),
        dec_(g3_, same_conv(2 * o.width, o.width, {3, 3}, o.padding_mode),
             concat_.dst_distribution(), 5, o.kernels, o.bn_relu),
        head_(g3_, segmentation_head(o.width, o.classes),
              dec_.dst_distribution(),
              with_kernels<ConvolutionOptions, Space>(o.kernels)),
        loss_(g3_, LossDesc::make(LossKind::kCrossEntropyIndices),
              head_.dst_layout().distribution()),
        up_w_(segmentation_upsample(2 * o.width, o.width)
                  .weights_shape()
                  .volume()),
        up_b_(o.width),
        head_w_(o.width * o.classes),
        head_b_(o.classes),
        x_(g1_, enc1a_.src_layout()),
        e1a_(g1_, enc1b_.src_layout()),
        skip_(g1_,
              same12_ ? pool_.src_layout() : plain(enc1b_.dst_distribution())),
        pooled_(g2_, pool_.dst_layout()),
        pooled_halo_(g2_, enc2a_.src_layout()),
        e2a_(g2_, enc2b_.src_layout()),
        e2b_(g2_, up_.src_layout()),
        upsampled_(g2_, up_.dst_layout()),
        cat_(g3_, dec_.src_layout()),
        dec_out_(g3_, head_.src_layout()),
        logits_(g3_, head_.dst_layout()),
        labels_(g3_, loss_.target_layout()),
        d_logits_(g3_, head_.diff_dst_layout()),
        d_dec_out_(g3_, head_.diff_src_layout()),
        d_cat_(g3_, dec_.diff_src_layout()),
        d_upsampled_(g2_, up_.diff_dst_layout()),
        d_skip_(g1_, plain(enc1b_.dst_distribution())),
        d_e2b_(g2_, up_.diff_src_layout()),
        d_e2a_(g2_, enc2b_.diff_src_layout()),
        d_pooled_(g2_, enc2a_.diff_src_layout()),
        d_enc1b_out_(g1_, same12_ ? pool_.diff_src_layout()
                                  : plain(enc1b_.dst_distribution())),
        d_e1a_(g1_, enc1b_.diff_src_layout()) {
    if (!same12_) {
      to_level2_.emplace(g1_, skip_.layout(), d_enc1b_out_.layout(), g2_,
                         pool_.src_layout(), pool_.diff_src_layout());
      pool_in_.emplace(g2_, pool_.src_layout());
      d_pool_in_.emplace(g2_, pool_.diff_src_layout());
    }
    // Also on one grid, when the split is uneven: 50 rows over 3 ranks
    // (17, 17, 16) pool to 9, 8, 8 rows and upsample to 18, 16, 16.
    if (!grids.same(kLevel2, kDecoder) ||
        up_.dst_layout().distribution() != cat_in_.distribution()) {
      up_move_.emplace(g2_, up_.dst_layout(), up_.diff_dst_layout(), g3_,
                       cat_in_, cat_in_);
      aligned_.emplace(g3_, cat_in_);
      d_aligned_.emplace(g3_, cat_in_);
    }
    if (!same13_) {
      skip_move_.emplace(g1_, skip_.layout(), d_skip_.layout(), g3_, cat_in_,
                         cat_in_);
      skip_there_.emplace(g3_, cat_in_);
      d_skip_there_.emplace(g3_, cat_in_);
    }
    up_w_.init_uniform(std::sqrt(6.0 / (2 * o.width * 4)), 6);
    up_b_.fill(0.0f);
    head_w_.init_uniform(std::sqrt(6.0 / o.width), 7);
    head_b_.fill(0.0f);
    fill_global(x_, [&](const Shape& i) {
      return segmentation_input(i, o.height, o.size);
    });
    fill_global(labels_,
                [&](const Shape& i) { return segmentation_label(i, o); });
  }

  std::vector<Param*> params() {
    std::vector<Param*> all = {&up_w_, &up_b_, &head_w_, &head_b_};
    for (ConvBnRelu<T, Space>* b : blocks()) {
      for (Param* p : b->params()) all.push_back(p);
    }
    return all;
  }

  std::vector<BatchNorm<T, Space>*> batch_norms() {
    std::vector<BatchNorm<T, Space>*> all;
    for (ConvBnRelu<T, Space>* b : blocks()) {
      all.push_back(&b->batch_norm());
    }
    return all;
  }

  // --data's file (from --write-data): datasets "x" and "labels", each
  // sample of the network's extents, or larger with --data-window (a
  // window at its offset; the labels' one channel, the same rows and
  // columns). The first batch is read here: a file of other extents,
  // types or storage order fails before any step.
  Index open_data(const TrainOptions& opt) {
    data_.emplace(x_.grid().comm(), opt.data_path, io::H5Mode::kRead);
    data_window_ = opt.data_window;
    const Shape xs = data_->shape("x"), ls = data_->shape("labels");
    if (data_window_.ndims() > 0) {
      require(ls.ndims() == 4 && ls[1] == 1, ErrorKind::kIo, opt.data_path,
              " holds labels of ", ls.ndims() == 4 ? ls[1] : 0,
              " channels, not 1 (labels of shape ", ls, ")");
    }
    require(xs[0] == ls[0], ErrorKind::kIo, opt.data_path, " holds ", xs[0],
            " inputs and ", ls[0], " labels");
    load_batch(0);
    return xs[0];
  }
  // The batch of samples [first, first + N) of --data's file (in device
  // memory through host copies of the tensors).
  void load_batch(Index first) {
    const io::H5ReadOptions at = data_read(data_window_, first, 4);
    io::H5ReadOptions labels_at = at;  // (their one channel from 0)
    labels_at.offset[1] = 0;
    if constexpr (Space::kHostAccessible) {
      read_as(x_, x_fp32_,
              [&](DistTensor<float>& x) { data_->read("x", x, at); });
      data_->read("labels", labels_, labels_at);
    } else {
      if (!x_fp32_) x_fp32_.emplace(x_.grid(), x_.layout());
      if (!labels_host_) {
        labels_host_.emplace(labels_.grid(), labels_.layout());
      }
      data_->read("x", *x_fp32_, at);
      data_->read("labels", *labels_host_, labels_at);
      to_space(*x_fp32_, x_);
      to_space(*labels_host_, labels_);
    }
  }

  // Forward and backward; returns the loss, gradients in params().
  double step() {
    return step_with(params_in(), [&] { return forward_backward(); });
  }

  // The parameters' copies the layers read and write.
  std::vector<const ParamIn<Space>*> params_in() const {
    std::vector<const ParamIn<Space>*> all = {&up_w_in_, &up_b_in_, &head_w_in_,
                                              &head_b_in_};
    for (const ConvBnRelu<T, Space>* b : blocks()) {
      for (const ParamIn<Space>* p : b->params_in()) all.push_back(p);
    }
    return all;
  }

  // This rank's blocked time since the last call.
  CommWait take_comm_wait() {
    CommWait w;
    w.take(pool_);
    w.take(up_);
    w.take(head_);
    for (ConvBnRelu<T, Space>* b : blocks()) {
      b->take_comm_wait(&w);
    }
    return w;
  }

  // The grid the loss (and so the step log) runs on.
  const ProcessGrid& loss_grid() const { return g3_; }

  // Times every layer's passes into `profile` (null: none).
  void set_profile(Profile* profile) {
    profile_ = profile;
    const char* names[] = {"enc1a", "enc1b", "enc2a", "enc2b", "dec"};
    std::vector<ConvBnRelu<T, Space>*> all = blocks();
    for (size_t i = 0; i < all.size(); ++i) {
      all[i]->set_profile(profile, names[i]);
    }
  }

 private:
  std::string description_;
  // The conv-BN-ReLU blocks.
  std::vector<ConvBnRelu<T, Space>*> blocks() {
    return {&enc1a_, &enc1b_, &enc2a_, &enc2b_, &dec_};
  }
  std::vector<const ConvBnRelu<T, Space>*> blocks() const {
    return {&enc1a_, &enc1b_, &enc2a_, &enc2b_, &dec_};
  }

  double forward_backward() {
    Profile* p = profile_;
    enc1a_.forward(x_, e1a_);
    enc1b_.forward(e1a_, skip_);
    DistTensor<T, Space>& pool_in = pool_in_ ? *pool_in_ : skip_;
    if (to_level2_) {
      profiled(p, "level2.move", kFwd, {},
               [&] { to_level2_->forward(skip_, pool_in); });
    }
    // Straight into level 2's input where its layout is pooling's output's
    // (level 2's first convolution reading in place), else copied there.
    const bool direct = pool_.dst_layout() == pooled_halo_.layout();
    profiled(p, "pool", kFwd, pool_, [&] {
      pool_.forward(pool_in, direct ? pooled_halo_ : pooled_);
    });
    if (!direct) {
      profiled(p, "pool.copy", kFwd, {},
               [&] { copy_shard(pooled_, pooled_halo_); });
    }
    enc2a_.forward(pooled_halo_, e2a_);
    enc2b_.forward(e2a_, e2b_);
    profiled(p, "up", kFwd, up_, [&] {
      up_.forward(e2b_, up_w_in_.value(), up_b_in_.value(), upsampled_);
    });
    profiled(p, "skip.move", kFwd, {}, [&] {
      if (up_move_) up_move_->forward(upsampled_, *aligned_);
      if (skip_move_) skip_move_->forward(skip_, *skip_there_);
    });
    profiled(p, "concat", kFwd, concat_, [&] {
      concat_.forward({up_move_ ? &*aligned_ : &upsampled_,
                       skip_move_ ? &*skip_there_ : &skip_},
                      cat_);
    });
    dec_.forward(cat_, dec_out_);
    profiled(p, "head", kFwd, head_, [&] {
      head_.forward(dec_out_, head_w_in_.value(), head_b_in_.value(), logits_);
    });
    // The loss and its gradient in one pass (any layout will do).
    double loss = 0;
    profiled(p, "loss", ProfilePass::kForwardBackward, loss_, [&] {
      loss = loss_.forward_backward(logits_, labels_, d_logits_);
    });
    profiled(p, "head", kWeights, head_, [&] {
      head_.backward_weights(dec_out_, d_logits_, head_w_in_.grad(),
                             head_b_in_.grad());
    });
    profiled(p, "head", kData, head_, [&] {
      head_.backward_data(d_logits_, head_w_in_.value(), d_dec_out_);
    });
    profiled_wait(p, "head", head_, [&] { head_.wait_gradients(); });
    dec_.backward(cat_, d_dec_out_, &d_cat_);
    profiled(p, "concat", kData, concat_, [&] {
      concat_.backward(d_cat_, {up_move_ ? &*d_aligned_ : &d_upsampled_,
                                skip_move_ ? &*d_skip_there_ : &d_skip_});
    });
    profiled(p, "skip.move", kData, {}, [&] {
      if (up_move_) up_move_->backward(*d_aligned_, d_upsampled_);
      if (skip_move_) skip_move_->backward(*d_skip_there_, d_skip_);
    });
    profiled(p, "up", kWeights, up_, [&] {
      up_.backward_weights(e2b_, d_upsampled_, up_w_in_.grad(),
                           up_b_in_.grad());
    });
    profiled(p, "up", kData, up_, [&] {
      up_.backward_data(d_upsampled_, up_w_in_.value(), d_e2b_);
    });
    profiled_wait(p, "up", up_, [&] { up_.wait_gradients(); });
    enc2b_.backward(e2a_, d_e2b_, &d_e2a_);
    enc2a_.backward(pooled_halo_, d_e2a_, &d_pooled_);
    profiled(p, "pool", kData, pool_, [&] {
      pool_.backward(pool_in, d_pooled_,
                     d_pool_in_ ? *d_pool_in_ : d_enc1b_out_);
    });
    if (to_level2_) {
      profiled(p, "level2.move", kData, {},
               [&] { to_level2_->backward(*d_pool_in_, d_enc1b_out_); });
    }
    profiled(p, "skip.add", kData, {}, [&] {
      add(d_enc1b_out_, d_skip_, d_enc1b_out_);  // the skip's gradient joins
    });
    enc1b_.backward(e1a_, d_enc1b_out_, &d_e1a_);
    enc1a_.backward(x_, d_e1a_, nullptr);  // no input gradient needed
    return loss;
  }

  const ProcessGrid &g1_, &g2_, &g3_;
  bool same12_, same13_;
  ConvBnRelu<T, Space> enc1a_, enc1b_;
  Pooling<T, Space> pool_;
  ConvBnRelu<T, Space> enc2a_, enc2b_;
  Deconvolution<T, Space> up_;
  HaloLayout cat_in_;  // each concatenated input's, on the decoder's grid
  Concat<T, Space> concat_;
  ConvBnRelu<T, Space> dec_;
  Convolution<T, Space> head_;
  Loss<T, Space> loss_;
  Param up_w_, up_b_, head_w_, head_b_;
  ParamIn<Space> up_w_in_{&up_w_}, up_b_in_{&up_b_}, head_w_in_{&head_w_},
      head_b_in_{&head_b_};
  DistTensor<T, Space> x_, e1a_, skip_, pooled_, pooled_halo_, e2a_, e2b_,
      upsampled_, cat_, dec_out_, logits_;
  DistTensor<std::int64_t, Space> labels_;
  std::optional<io::H5File> data_;  // --data
  Shape data_window_;               // --data-window
  // --data: read for bf16 or device memory, then converted or copied.
  std::optional<DistTensor<float>> x_fp32_;
  std::optional<DistTensor<std::int64_t>> labels_host_;
  DistTensor<T, Space> d_logits_, d_dec_out_, d_cat_, d_upsampled_, d_skip_,
      d_e2b_, d_e2a_, d_pooled_, d_enc1b_out_, d_e1a_;
  // Set where units' grids (or splits) differ (see above).
  std::optional<Move<T, Space>> to_level2_, up_move_, skip_move_;
  std::optional<DistTensor<T, Space>> pool_in_, d_pool_in_, aligned_,
      d_aligned_, skip_there_, d_skip_there_;
  Profile* profile_ = nullptr;
};

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_SEGMENTATION_NET_H_
