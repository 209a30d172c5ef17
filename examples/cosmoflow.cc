// Trains a 3D regression network in the style of CosmoFlow on synthetic
// volumes, every tensor split over a sample x spatial grid (see
// examples/cosmoflow.md):
//
//   x (N, 4, S, S, S) -> L x [conv3x3x3-BN-ReLU -> max pool 2x2x2]
//                        (16, 32, 64, ... channels)
//                     -> dense (a convolution whose kernel covers the whole
//                        remaining volume) -> ReLU -> dense (1x1x1)
//                     -> 4 outputs, mean squared error against the
//                        sample's 4 parameters
//
// Each sample has 4 parameters in [-1, 1]; its volume is a sum of 3D plane
// waves, one per parameter and channel, weighted by that parameter, so the
// parameters can be read back from the volume and the loss can fall. Every
// rank writes its own shard from global indices; batch norm uses global
// statistics, so the loss curve is the same on every grid (to rounding).
//
//   mpirun -np 4 cosmoflow [--grid=1x1x4x1x1 | --grid=auto [--machine=FILE]]
//       [--size=32] [--samples=4]
//       [--stacks=3] [--width=16] [--hidden=64] [--steps=10] [--lr=0.0005]
//       [--momentum=0.5] [--losses=FILE] [--timeout_s=S]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layers/activation.h"
#include "layers/convolution.h"
#include "layers/copy_shard.h"
#include "distconv/error.h"
#include "layers/loss.h"
#include "layers/pooling.h"
#include "examples/conv_block.h"
#include "examples/cosmoflow_files.h"
#include "examples/move.h"
#include "examples/networks.h"
#include "examples/unit_grids.h"
#include "examples/training.h"
#include "perf/cli_args.h"

namespace distconv {
namespace examples {
namespace {

constexpr Index kChannels = kCosmoflowChannels, kTargets = kCosmoflowTargets;

struct CosmoflowOptions {
  CosmoflowShape shape;
  TrainOptions train;
};

CosmoflowOptions parse(int argc, char** argv) {
  CosmoflowOptions o;
  o.train.lr = 0.0005;
  o.train.momentum = 0.5;
  parse_args(argc, argv, &o.train, o.shape.options());
  o.shape.padding_mode = o.train.padding_mode;
  o.shape.check();
  return o;
}

constexpr double kTwoPi = 6.283185307179586;

// Parameter k of sample n, in [-1, 1].
float target_value(Index n, Index k) {
  return static_cast<float>(std::sin(1.7 * n + 2.3 * k + 0.5));
}

// Channel c of sample n at (d, h, w): each parameter k weights a plane wave
// of its own direction (per channel), plus a sample-dependent wave.
float input_value(const Shape& i, Index size) {
  const Index n = i[0], c = i[1];
  double v = 0.3 * std::sin(kTwoPi * (i[2] + 2 * i[4]) / size + 0.9 * n);
  for (Index k = 0; k < kTargets; ++k) {
    const double fd = 1 + (k + c) % 3, fh = 1 + (2 * k + c) % 2,
                 fw = (k + 2 * c) % 3;
    v += 0.5 * target_value(n, k) *
         std::sin(kTwoPi * (fd * i[2] + fh * i[3] + fw * i[4]) / size +
                  0.4 * k + 0.3 * c);
  }
  return static_cast<float>(v);
}

// One conv-BN-ReLU block and the pooling after it, with their tensors.
template <typename T>
struct Stack {
  Stack(const ProcessGrid& grid, Index in, Index out, const Distribution& src,
        PaddingMode mode, unsigned seed)
      : block(grid, same_conv(in, out, {3, 3, 3}, mode), src, seed),
        pool(grid, PoolDesc::make(PoolKind::kMax, {2, 2, 2}),
             block.dst_distribution()),
        in(grid, block.src_layout()),
        out(grid, pool.src_layout()),
        pooled(grid, pool.dst_layout()),
        d_in(grid, block.diff_src_layout()),
        d_out(grid, pool.diff_src_layout()) {}

  ConvBnRelu<T> block;
  Pooling<T> pool;
  DistTensor<T> in, out, pooled, d_in, d_out;
  // When the next unit runs on another grid: the move there, and the
  // pooled tensor's gradient brought back.
  std::optional<Move<T>> to_next;
  std::optional<DistTensor<T>> d_pooled;
};

// Stack l runs on grids[l], the head on grids[stacks]; where consecutive
// units' grids differ, a Move carries the pooled tensor over (and its
// gradient back), and the next unit's input is balanced over its grid.
template <typename T>
class Network {
 public:
  Network(const UnitGrids& grids, const CosmoflowShape& o)
      : head_grid_(grids[static_cast<int>(o.stacks)]),
        extent_(o.head_extent()),
        features_(o.features()),
        dense1_w_(cosmoflow_dense(features_, o.hidden, extent_)
                      .weights_shape()
                      .volume()),
        dense1_b_(o.hidden),
        dense2_w_(o.hidden * kTargets),
        dense2_b_(kTargets) {
    const int stacks = static_cast<int>(o.stacks);
    Distribution dist(o.input(), grids[0].shape());
    Index channels = kChannels;
    for (int l = 0; l < stacks; ++l) {
      const Index next = o.width << l;
      stacks_.push_back(std::make_unique<Stack<T>>(
          grids[l], channels, next, dist, o.padding_mode,
          static_cast<unsigned>(l + 1)));
      dist = grids.arriving(stacks_.back()->pool.dst_layout().distribution(),
                            l, l + 1);
      channels = next;
    }
    const ProcessGrid& grid = head_grid_;
    dense1_.emplace(grid, cosmoflow_dense(features_, o.hidden, extent_), dist);
    relu_.emplace(grid, ActivationDesc::relu(),
                  dense1_->dst_layout().distribution());
    dense2_.emplace(grid, cosmoflow_dense(o.hidden, kTargets, 1),
                    dense1_->dst_layout().distribution());
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
      Stack<T>& s = *stacks_[l];
      const bool last = l + 1 == stacks;
      s.to_next.emplace(grids[l], s.pool.dst_layout(),
                        s.pool.diff_dst_layout(), grids[l + 1],
                        last ? dense1_->src_layout()
                             : stacks_[l + 1]->block.src_layout(),
                        last ? dense1_->diff_src_layout()
                             : stacks_[l + 1]->block.diff_src_layout());
      s.d_pooled.emplace(grids[l], s.pool.diff_dst_layout());
    }
    fill_global(stacks_[0]->in,
                [&](const Shape& i) { return input_value(i, o.size); });
    fill_global(*target_,
                [](const Shape& i) { return target_value(i[0], i[1]); });
  }

  std::vector<Param*> params() {
    std::vector<Param*> all = {&dense1_w_, &dense1_b_, &dense2_w_, &dense2_b_};
    for (auto& s : stacks_) {
      for (Param* p : s->block.params()) all.push_back(p);
    }
    return all;
  }

  std::vector<BatchNorm<T>*> batch_norms() {
    std::vector<BatchNorm<T>*> all;
    for (auto& s : stacks_) all.push_back(&s->block.batch_norm());
    return all;
  }

  // --data: a file from --write-data (datasets "x" and "targets"), or a
  // directory of files in the public layout (examples/cosmoflow_files.h).
  Index open_data(const std::string& path) {
    MPI_Comm comm = stacks_[0]->in.grid().comm();
    if (std::filesystem::is_directory(path)) {
      files_.emplace(comm, path);
      return files_->samples();
    }
    data_.emplace(comm, path, io::H5Mode::kRead);
    return data_->shape("x")[0];
  }
  // The batch of samples [first, first + N) of --data.
  void load_batch(Index first) {
    // The files hold fp32: read through fp32 tensors for bf16.
    read_as(stacks_[0]->in, x_fp32_, [&](DistTensor<float>& x) {
      read_as(*target_, target_fp32_, [&](DistTensor<float>& target) {
        if (files_) {
          files_->load(first, x, target);
          return;
        }
        data_->read("x", x, io::H5ReadOptions{Shape{first, 0, 0, 0, 0}});
        data_->read("targets", target,
                    io::H5ReadOptions{Shape{first, 0, 0, 0, 0}});
      });
    });
  }

  double step() {
    for (size_t l = 0; l < stacks_.size(); ++l) {
      Stack<T>& s = *stacks_[l];
      s.block.forward(s.in, s.out);
      s.pool.forward(s.out, s.pooled);
      DistTensor<T>& next =
          l + 1 < stacks_.size() ? stacks_[l + 1]->in : *features_t_;
      if (s.to_next) {
        s.to_next->forward(s.pooled, next);
      } else {
        copy_shard(s.pooled, next);
      }
    }
    dense1_->forward(*features_t_, dense1_w_.value.data(),
                     dense1_b_.value.data(), *hidden_);
    relu_->forward(*hidden_, *hidden_relu_);
    dense2_->forward(*hidden_relu_, dense2_w_.value.data(),
                     dense2_b_.value.data(), *prediction_);
    const double loss = loss_->forward(*prediction_, *target_);

    loss_->backward(*prediction_, *target_, *d_prediction_);  // any layout
    dense2_->backward_weights(*hidden_relu_, *d_prediction_,
                              dense2_w_.grad.data(), dense2_b_.grad.data());
    dense2_->backward_data(*d_prediction_, dense2_w_.value.data(),
                           *d_hidden_relu_);
    dense2_->wait_gradients();
    relu_->backward(*hidden_, *d_hidden_relu_, *d_hidden_);
    dense1_->backward_weights(*features_t_, *d_hidden_, dense1_w_.grad.data(),
                              dense1_b_.grad.data());
    dense1_->backward_data(*d_hidden_, dense1_w_.value.data(), *d_features_);
    dense1_->wait_gradients();
    const DistTensor<T>* d_next = &*d_features_;
    for (size_t l = stacks_.size(); l-- > 0;) {
      Stack<T>& s = *stacks_[l];
      if (s.to_next) {
        s.to_next->backward(*d_next, *s.d_pooled);
        d_next = &*s.d_pooled;
      }
      s.pool.backward(s.out, *d_next, s.d_out);
      s.block.backward(s.in, s.d_out, l > 0 ? &s.d_in : nullptr);
      d_next = &s.d_in;
    }
    return loss;
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

 private:
  const ProcessGrid& head_grid_;
  Index extent_, features_;
  Param dense1_w_, dense1_b_, dense2_w_, dense2_b_;
  std::vector<std::unique_ptr<Stack<T>>> stacks_;
  // Planned after the stacks (their output distribution is the head's
  // input), hence optional.
  std::optional<Convolution<T>> dense1_, dense2_;
  std::optional<Activation<T>> relu_;
  std::optional<Loss<T>> loss_;
  std::optional<DistTensor<T>> features_t_, hidden_, hidden_relu_,
      prediction_, target_, d_prediction_, d_hidden_relu_,
      d_hidden_, d_features_;
  std::optional<io::H5File> data_;       // --data=FILE.h5
  std::optional<CosmoflowFiles> files_;  // --data=DIR
  // --data with bf16: the batch read in fp32, then rounded.
  std::optional<DistTensor<float>> x_fp32_, target_fp32_;
};

// --write-data: the synthetic volumes and targets of `samples` samples (the
// first --samples of them are the batch trained on without --data), as
// datasets "x" (float32, N x 4 x S x S x S) and "targets" (float32, N x 4 x
// 1 x 1 x 1), in chunks of one sample, written from shards split along D.
void write_data(const std::string& path, Index samples,
                const CosmoflowShape& o) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, size, 1, 1});
  const Shape x_shape{samples, kChannels, o.size, o.size, o.size};
  const Shape t_shape{samples, kTargets, 1, 1, 1};
  DistTensor<float> x(grid, HaloLayout(Distribution(x_shape, grid.shape())));
  DistTensor<float> t(grid, HaloLayout(Distribution(t_shape, grid.shape())));
  fill_global(x, [&](const Shape& i) { return input_value(i, o.size); });
  fill_global(t, [](const Shape& i) { return target_value(i[0], i[1]); });
  io::H5File file(MPI_COMM_WORLD, path, io::H5Mode::kCreate);
  file.write("x", x,
             io::H5DatasetOptions{Shape{1, kChannels, o.size, o.size, o.size}});
  file.write("targets", t);
  file.close();
  if (grid.rank() == 0) {
    std::printf("cosmoflow: wrote %lld samples to %s\n",
                static_cast<long long>(samples), path.c_str());
  }
}

int run(int argc, char** argv) {
  const CosmoflowOptions opt = parse(argc, argv);
  const CosmoflowShape& o = opt.shape;
  if (!opt.train.write_data_path.empty()) {
    write_data(opt.train.write_data_path,
               opt.train.data_samples ? opt.train.data_samples : o.samples, o);
    return 0;
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const UnitGrids grids(MPI_COMM_WORLD, cosmoflow_network(o), opt.train,
                        Shape{1, 1, size, 1, 1});
  if (grids[0].rank() == 0) {
    std::printf(
        "cosmoflow: %lld x %lld x %lld^3 volumes, %lld stacks from width "
        "%lld, dense %lld -> %lld, %s, grids (NxCxDxHxW) %s, %d steps of "
        "SGD (lr %g, momentum %g)\n",
        static_cast<long long>(o.samples), static_cast<long long>(kChannels),
        static_cast<long long>(o.size), static_cast<long long>(o.stacks),
        static_cast<long long>(o.width), static_cast<long long>(o.hidden),
        static_cast<long long>(kTargets),
        describe(opt.train.precision), grids.describe().c_str(),
        opt.train.steps, opt.train.lr, opt.train.momentum);
  }
  train_in_precision<Network>(
      opt.train, o.samples,
      [](auto& net) -> const ProcessGrid& { return net.head_grid(); }, grids,
      o);
  return 0;
}

}  // namespace
}  // namespace examples
}  // namespace distconv

int main(int argc, char** argv) {
  return distconv::examples::run_main(argc, argv, distconv::examples::run);
}
