// The CosmoFlow example's network (examples/cosmoflow.cc,
// examples/cosmoflow.md) in host or device memory (float, bf16), and its
// synthetic data: volumes of plane waves weighted by each sample's 4
// parameters.
//
//   CosmoflowNet<float> net(grids, shape);          // host memory
//   CosmoflowNet<float, DeviceSpace> gpu(grids, shape);
//   train(net, net.head_grid(), options, shape.samples);
#ifndef DISTCONV_EXAMPLES_COSMOFLOW_NET_H_
#define DISTCONV_EXAMPLES_COSMOFLOW_NET_H_

#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "examples/conv_block.h"
#include "examples/cosmoflow_files.h"
#include "examples/move.h"
#include "examples/networks.h"
#include "examples/training.h"
#include "examples/unit_grids.h"
#include "io/h5_file.h"
#include "layers/activation.h"
#include "layers/convolution.h"
#include "layers/copy_shard.h"
#include "layers/loss.h"
#include "layers/pooling.h"

namespace distconv {
namespace examples {

inline constexpr double kCosmoflowTwoPi = 6.283185307179586;

// Parameter k of sample n, in [-1, 1].
inline float cosmoflow_target(Index n, Index k) {
  return static_cast<float>(std::sin(1.7 * n + 2.3 * k + 0.5));
}

// Channel c of sample n at (d, h, w): each parameter k weights a plane wave
// of its own direction (per channel), plus a sample-dependent wave.
inline float cosmoflow_input(const Shape& i, Index size) {
  const Index n = i[0], c = i[1];
  double v =
      0.3 * std::sin(kCosmoflowTwoPi * (i[2] + 2 * i[4]) / size + 0.9 * n);
  for (Index k = 0; k < kCosmoflowTargets; ++k) {
    const double fd = 1 + (k + c) % 3, fh = 1 + (2 * k + c) % 2,
                 fw = (k + 2 * c) % 3;
    v += 0.5 * cosmoflow_target(n, k) *
         std::sin(kCosmoflowTwoPi * (fd * i[2] + fh * i[3] + fw * i[4]) / size +
                  0.4 * k + 0.3 * c);
  }
  return static_cast<float>(v);
}

// One conv-BN-ReLU block and the pooling after it, with their tensors.
template <typename T, typename Space>
struct CosmoflowStack {
  CosmoflowStack(const ProcessGrid& grid, Index in, Index out,
                 const Distribution& src, PaddingMode mode, unsigned seed,
                 const CpuConvOptions& kernels, BnRelu bn_relu)
      : block(grid, same_conv(in, out, {3, 3, 3}, mode), src, seed, kernels,
              bn_relu),
        pool(grid, PoolDesc::make(PoolKind::kMax, {2, 2, 2}),
             block.dst_distribution(), pooling_with_kernels<Space>(kernels)),
        in(grid, block.src_layout()),
        out(grid, pool.src_layout()),
        pooled(grid, pool.dst_layout()),
        d_in(grid, block.diff_src_layout()),
        d_out(grid, pool.diff_src_layout()) {}

  ConvBnRelu<T, Space> block;
  Pooling<T, Space> pool;
  DistTensor<T, Space> in, out, pooled, d_in, d_out;
  // When the next unit runs on another grid: the move there, and the
  // pooled tensor's gradient brought back.
  std::optional<Move<T, Space>> to_next;
  std::optional<DistTensor<T, Space>> d_pooled;
  // The profile's rows of the pooling and the move ("convL.pool",
  // "convL.move"), set with the profile.
  std::string pool_name, move_name;
};

// Stack l runs on grids[l], the head on grids[stacks]; where consecutive
// units' grids differ, a Move carries the pooled tensor over (and its
// gradient back), and the next unit's input is balanced over its grid.
template <typename T, typename Space = HostSpace>
class CosmoflowNet {
 public:
  // What its checkpoints belong to (the shape's describe()).
  const std::string& description() const { return description_; }
  CosmoflowNet(const UnitGrids& grids, const CosmoflowShape& o)
      : description_(o.describe()),
        head_grid_(grids[static_cast<int>(o.stacks)]),
        extent_(o.head_extent()),
        features_(o.features()),
        dense1_w_(cosmoflow_dense(features_, o.hidden, extent_)
                      .weights_shape()
                      .volume()),
        dense1_b_(o.hidden),
        dense2_w_(o.hidden * kCosmoflowTargets),
        dense2_b_(kCosmoflowTargets) {
    const int stacks = static_cast<int>(o.stacks);
    Distribution dist(o.input(), grids[0].shape());
    Index channels = kCosmoflowChannels;
    for (int l = 0; l < stacks; ++l) {
      const Index next = o.width << l;
      stacks_.push_back(std::make_unique<CosmoflowStack<T, Space>>(
          grids[l], channels, next, dist, o.padding_mode,
          static_cast<unsigned>(l + 1), o.kernels, o.bn_relu));
      dist = grids.arriving(stacks_.back()->pool.dst_layout().distribution(), l,
                            l + 1);
      channels = next;
    }
    const ProcessGrid& grid = head_grid_;
    const auto options = with_kernels<ConvolutionOptions, Space>(o.kernels);
    dense1_.emplace(grid, cosmoflow_dense(features_, o.hidden, extent_), dist,
                    options);
    relu_.emplace(grid, ActivationDesc::relu(),
                  dense1_->dst_layout().distribution());
    dense2_.emplace(grid, cosmoflow_dense(o.hidden, kCosmoflowTargets, 1),
                    dense1_->dst_layout().distribution(), options);
    loss_.emplace(grid, LossDesc::make(LossKind::kMeanSquaredError),
                  dense2_->dst_layout().distribution());
    dense1_w_.init_uniform(
        std::sqrt(6.0 / (features_ * extent_ * extent_ * extent_)), 101);
    dense1_b_.fill(0.0f);
    dense2_w_.init_uniform(std::sqrt(6.0 / o.hidden), 102);
    dense2_b_.fill(0.0f);
    features_t_.emplace(grid, dense1_->src_layout());
    hidden_.emplace(grid, dense1_->dst_layout());
    hidden_relu_.emplace(grid, dense2_->src_layout());
    prediction_.emplace(grid, dense2_->dst_layout());
    target_.emplace(grid, loss_->prediction_layout());
    d_prediction_.emplace(grid, dense2_->diff_dst_layout());
    d_hidden_relu_.emplace(grid, dense2_->diff_src_layout());
    d_hidden_.emplace(grid, dense1_->diff_dst_layout());
    d_features_.emplace(grid, dense1_->diff_src_layout());
    // The moves between units on different grids.
    for (int l = 0; l < stacks; ++l) {
      if (grids.same(l, l + 1)) continue;
      CosmoflowStack<T, Space>& s = *stacks_[l];
      const bool last = l + 1 == stacks;
      s.to_next.emplace(
          grids[l], s.pool.dst_layout(), s.pool.diff_dst_layout(), grids[l + 1],
          last ? dense1_->src_layout() : stacks_[l + 1]->block.src_layout(),
          last ? dense1_->diff_src_layout()
               : stacks_[l + 1]->block.diff_src_layout());
      s.d_pooled.emplace(grids[l], s.pool.diff_dst_layout());
    }
    fill_global(stacks_[0]->in,
                [&](const Shape& i) { return cosmoflow_input(i, o.size); });
    fill_global(*target_,
                [](const Shape& i) { return cosmoflow_target(i[0], i[1]); });
  }

  std::vector<Param*> params() {
    std::vector<Param*> all = {&dense1_w_, &dense1_b_, &dense2_w_, &dense2_b_};
    for (auto& s : stacks_) {
      for (Param* p : s->block.params()) all.push_back(p);
    }
    return all;
  }

  std::vector<BatchNorm<T, Space>*> batch_norms() {
    std::vector<BatchNorm<T, Space>*> all;
    for (auto& s : stacks_) all.push_back(&s->block.batch_norm());
    return all;
  }

  // --data: a file from --write-data (datasets "x" and "targets"), each
  // sample of the network's extents or, with --data-window, a larger
  // volume the window is read from; or a directory of files in the public
  // layout (examples/cosmoflow_files.h). The first batch is read here: a
  // file of other extents, types or storage order fails before any step.
  Index open_data(const TrainOptions& opt) {
    MPI_Comm comm = stacks_[0]->in.grid().comm();
    data_window_ = opt.data_window;
    Index samples = 0;
    if (std::filesystem::is_directory(opt.data_path)) {
      require(data_window_.ndims() == 0, ErrorKind::kInvalidArgument,
              "--data-window reads a window of a data set of one file, not "
              "of a directory of files (",
              opt.data_path, ")");
      files_.emplace(comm, opt.data_path);
      samples = files_->samples();
    } else {
      data_.emplace(comm, opt.data_path, io::H5Mode::kRead);
      const Shape xs = data_->shape("x"), ts = data_->shape("targets");
      require(xs[0] == ts[0], ErrorKind::kIo, opt.data_path, " holds ", xs[0],
              " volumes and ", ts[0], " targets");
      samples = xs[0];
    }
    load_batch(0);
    return samples;
  }
  // The batch of samples [first, first + N) of --data.
  void load_batch(Index first) {
    auto read = [&](DistTensor<float>& x, DistTensor<float>& target) {
      if (files_) {
        files_->load(first, x, target);
        return;
      }
      data_->read("x", x, data_read(data_window_, first, 5));
      data_->read("targets", target, data_read(Shape(), first, 5));
    };
    DistTensor<T, Space>& x = stacks_[0]->in;
    if constexpr (Space::kHostAccessible) {
      // The files hold fp32: read through fp32 tensors for bf16.
      read_as(x, x_fp32_, [&](DistTensor<float>& xf) {
        read_as(*target_, target_fp32_,
                [&](DistTensor<float>& target) { read(xf, target); });
      });
    } else {
      // Device memory: read into host tensors, then copied.
      if (!x_fp32_) x_fp32_.emplace(x.grid(), x.layout());
      if (!target_fp32_) {
        target_fp32_.emplace(target_->grid(), target_->layout());
      }
      read(*x_fp32_, *target_fp32_);
      to_space(*x_fp32_, x);
      to_space(*target_fp32_, *target_);
    }
  }

  // Forward and backward; returns the loss, gradients in params().
  double step() {
    return step_with(params_in(), [&] { return forward_backward(); });
  }

  // The parameters' copies the layers read and write.
  std::vector<const ParamIn<Space>*> params_in() const {
    std::vector<const ParamIn<Space>*> all = {&dense1_w_in_, &dense1_b_in_,
                                              &dense2_w_in_, &dense2_b_in_};
    for (const auto& s : stacks_) {
      for (const ParamIn<Space>* p : s->block.params_in()) all.push_back(p);
    }
    return all;
  }

  // This rank's blocked time since the last call.
  CommWait take_comm_wait() {
    CommWait w;
    w.take(*dense1_);
    w.take(*dense2_);
    for (auto& s : stacks_) {
      s->block.take_comm_wait(&w);
      w.take(s->pool);
    }
    return w;
  }

  // The grid the loss (and so the step log) runs on.
  const ProcessGrid& head_grid() const { return head_grid_; }

  // Times every layer's passes into `profile` (null: none).
  void set_profile(Profile* profile) {
    profile_ = profile;
    for (size_t l = 0; l < stacks_.size(); ++l) {
      const std::string name = "conv" + std::to_string(l + 1);
      stacks_[l]->block.set_profile(profile, name);
      stacks_[l]->pool_name = name + ".pool";
      stacks_[l]->move_name = name + ".move";
    }
  }

 private:
  std::string description_;

  double forward_backward() {
    Profile* p = profile_;
    for (size_t l = 0; l < stacks_.size(); ++l) {
      CosmoflowStack<T, Space>& s = *stacks_[l];
      s.block.forward(s.in, s.out);
      profiled(p, s.pool_name, kFwd, s.pool,
               [&] { s.pool.forward(s.out, s.pooled); });
      DistTensor<T, Space>& next =
          l + 1 < stacks_.size() ? stacks_[l + 1]->in : *features_t_;
      profiled(p, s.move_name, kFwd, {}, [&] {
        if (s.to_next) {
          s.to_next->forward(s.pooled, next);
        } else {
          copy_shard(s.pooled, next);
        }
      });
    }
    profiled(p, "dense1", kFwd, *dense1_, [&] {
      dense1_->forward(*features_t_, dense1_w_in_.value(), dense1_b_in_.value(),
                       *hidden_);
    });
    profiled(p, "dense1.relu", kFwd, *relu_,
             [&] { relu_->forward(*hidden_, *hidden_relu_); });
    profiled(p, "dense2", kFwd, *dense2_, [&] {
      dense2_->forward(*hidden_relu_, dense2_w_in_.value(),
                       dense2_b_in_.value(), *prediction_);
    });
    // The loss and its gradient in one pass (any layout).
    double loss = 0;
    profiled(p, "loss", ProfilePass::kForwardBackward, *loss_, [&] {
      loss = loss_->forward_backward(*prediction_, *target_, *d_prediction_);
    });
    profiled(p, "dense2", kWeights, *dense2_, [&] {
      dense2_->backward_weights(*hidden_relu_, *d_prediction_,
                                dense2_w_in_.grad(), dense2_b_in_.grad());
    });
    profiled(p, "dense2", kData, *dense2_, [&] {
      dense2_->backward_data(*d_prediction_, dense2_w_in_.value(),
                             *d_hidden_relu_);
    });
    profiled_wait(p, "dense2", *dense2_, [&] { dense2_->wait_gradients(); });
    profiled(p, "dense1.relu", kData, *relu_,
             [&] { relu_->backward(*hidden_, *d_hidden_relu_, *d_hidden_); });
    profiled(p, "dense1", kWeights, *dense1_, [&] {
      dense1_->backward_weights(*features_t_, *d_hidden_, dense1_w_in_.grad(),
                                dense1_b_in_.grad());
    });
    profiled(p, "dense1", kData, *dense1_, [&] {
      dense1_->backward_data(*d_hidden_, dense1_w_in_.value(), *d_features_);
    });
    profiled_wait(p, "dense1", *dense1_, [&] { dense1_->wait_gradients(); });
    const DistTensor<T, Space>* d_next = &*d_features_;
    for (size_t l = stacks_.size(); l-- > 0;) {
      CosmoflowStack<T, Space>& s = *stacks_[l];
      if (s.to_next) {
        profiled(p, s.move_name, kData, {},
                 [&] { s.to_next->backward(*d_next, *s.d_pooled); });
        d_next = &*s.d_pooled;
      }
      profiled(p, s.pool_name, kData, s.pool,
               [&] { s.pool.backward(s.out, *d_next, s.d_out); });
      s.block.backward(s.in, s.d_out, l > 0 ? &s.d_in : nullptr);
      d_next = &s.d_in;
    }
    return loss;
  }

  const ProcessGrid& head_grid_;
  Index extent_, features_;
  Param dense1_w_, dense1_b_, dense2_w_, dense2_b_;
  ParamIn<Space> dense1_w_in_{&dense1_w_}, dense1_b_in_{&dense1_b_},
      dense2_w_in_{&dense2_w_}, dense2_b_in_{&dense2_b_};
  std::vector<std::unique_ptr<CosmoflowStack<T, Space>>> stacks_;
  // Planned after the stacks (their output distribution is the head's
  // input), hence optional.
  std::optional<Convolution<T, Space>> dense1_, dense2_;
  std::optional<Activation<T, Space>> relu_;
  std::optional<Loss<T, Space>> loss_;
  std::optional<DistTensor<T, Space>> features_t_, hidden_, hidden_relu_,
      prediction_, target_, d_prediction_, d_hidden_relu_, d_hidden_,
      d_features_;
  Profile* profile_ = nullptr;
  std::optional<io::H5File> data_;       // --data=FILE.h5
  Shape data_window_;                    // --data-window
  std::optional<CosmoflowFiles> files_;  // --data=DIR
  // --data with bf16 or in device memory: the batch read in fp32, then
  // rounded or copied.
  std::optional<DistTensor<float>> x_fp32_, target_fp32_;
};

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_COSMOFLOW_NET_H_
