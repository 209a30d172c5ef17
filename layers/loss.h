// Loss<T>: a loss (LossDesc: cross-entropy on class indices or on target
// probabilities, mean squared error; mean or sum) of a prediction split
// over a ProcessGrid (samples and spatial dimensions), giving the loss and
// gradient of one process. Describe (LossDesc), plan (plan_loss in
// shard_plan.h, or the constructor), execute (forward, backward), many
// times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 1});      // split H
//   Loss<float> loss(grid, LossDesc::make(LossKind::kCrossEntropyIndices),
//                    Distribution(Shape{2, 5, 64, 64}, grid.shape()));
//   DistTensor<float> x(grid, loss.prediction_layout());      // logits
//   DistTensor<std::int64_t> t(grid, loss.target_layout());   // 2x1x64x64
//   double l = loss.forward(x, t);      // the same value on every rank
//   loss.sample_losses();               // this rank's samples' losses
//   DistTensor<float> dx(grid, loss.diff_prediction_layout());
//   loss.backward(x, t, dx);            // d l / d x
//   l = loss.forward_backward(x, t, dx);  // both in one pass
//
// What it computes is distconv/loss_desc.h's definition (PyTorch's
// cross_entropy and mse_loss), computed per cell in double (log-sum-exp with
// the cell's maximum subtracted) and reduced in double:
//  - forward() returns the loss of the whole tensor, reduced over every
//    rank: each rank sums its shard's terms (and counts them) per sample;
//    an allreduce over grid.sample_comm() (the ranks holding the same
//    samples, i.e. the spatial ranks sharing them) gives every one of them
//    each sample's sum and count; an allreduce over grid.along(0) (one rank
//    per sample range) sums those into the total. So the total is the same
//    on every rank, and sample_losses() holds, for the samples
//    [first_sample(), first_sample() + sample_losses().size()) of this
//    rank's shard, each sample's loss with the same reduction over its own
//    terms (kMean: its sum over its own count, 0 if it counts none; kSum:
//    its sum). With kMean and no ignored cells the total is the mean of
//    the sample losses.
//  - backward() writes d loss / d prediction into the shard of
//    diff_prediction, with the reduction's scaling (kMean divides by the
//    global count), so it is the serial gradient. The upstream gradient is
//    1 (the loss is the network's end).
//
// Targets: class indices are a DistTensor<std::int64_t> of
// LossDesc::target_shape(prediction) = (N, 1, spatial...) over the same
// grid (its N and spatial partitions are the prediction's); probabilities
// and MSE targets are a DistTensor<T> of the prediction's distribution.
// Calling the overload that does not fit the kind throws kInvalidArgument.
// A class index outside [0, C) (other than ignore_index) throws
// kInvalidArgument on every rank, with the global count of bad cells: the
// check is data-dependent, so its flag travels with the reductions.
//
// Layouts: the plan's layouts are channels-last without halos, but every
// pass accepts any tensor whose layout has the right Distribution (halos of
// another layer's layout, either storage order): passes read and write
// shard interiors only, and leave halo cells alone.
//
// GPU memory (Loss<T, DeviceSpace>; float and double; target
// //layers:device_loss, --config=cuda): the same layer on DistTensor<T,
// DeviceSpace> predictions and DistTensor<T or std::int64_t, DeviceSpace>
// targets, its cells computed by CUDA kernels running the host loops' own
// cell functions (kernels/channel_cells.h) in double, queued on the
// stream of the layer's Exec<DeviceSpace> (its last argument). forward() sums
// each sample's terms on the GPU in a fixed order (the same sums run after
// run), then waits for the stream to bring them to the host for the reductions
// over ranks; backward() with class indices waits likewise for the count of
// counted cells. Results within an ulp or so of the host's (the GPU's exp and
// log).
//
// Supported: 2D and 3D, grids splitting N and any spatial dimensions,
// uneven and empty shards (a rank with no cells adds nothing and still
// joins the collectives). Not supported: a grid splitting channels
// (kUnsupported). The constructor (collective) validates from global
// information, so bad input throws the same distconv::Error on every rank.
// forward() and backward() are collective over the grid; a tensor of
// another distribution, on any rank, throws kShapeMismatch on every rank
// (naming that rank) before any data moves.
#ifndef DISTCONV_LAYERS_LOSS_H_
#define DISTCONV_LAYERS_LOSS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/loss_desc.h"
#include "distconv/memory_space.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "layers/layer_stats.h"
#include "layers/shard_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h predictions (bf16
// and fp16 reduced in double) in host and GPU memory.
template <typename T, typename Space = HostSpace>
class Loss {
 public:
  Loss(const ProcessGrid& grid, const LossDesc& desc,
       const Distribution& prediction, const Exec<Space>& exec = {});
  // Runs a plan made beforehand by plan_loss(desc, ...); checked on every
  // rank together (made for this rank, grid and description).
  Loss(const ProcessGrid& grid, const LossDesc& desc, ShardPlan plan,
       const Exec<Space>& exec = {});

  const LossDesc& desc() const;
  // Channels-last, no halos.
  const HaloLayout& prediction_layout() const;
  const HaloLayout& target_layout() const;  // (N, 1, spatial) for indices
  const HaloLayout& diff_prediction_layout() const;
  // The layouts, this rank's shards and the sums over ranks of each pass.
  const ShardPlan& plan() const;

  // Value targets (kCrossEntropyProbabilities, kMeanSquaredError).
  double forward(const DistTensor<T, Space>& prediction,
                 const DistTensor<T, Space>& target);
  void backward(const DistTensor<T, Space>& prediction,
                const DistTensor<T, Space>& target,
                DistTensor<T, Space>& diff_prediction);
  // Class-index targets (kCrossEntropyIndices).
  double forward(const DistTensor<T, Space>& prediction,
                 const DistTensor<std::int64_t, Space>& target);
  void backward(const DistTensor<T, Space>& prediction,
                const DistTensor<std::int64_t, Space>& target,
                DistTensor<T, Space>& diff_prediction);

  // forward() then backward() on the same tensors in one pass over the
  // cells: the same loss, sample_losses() and gradient, bit for bit, with
  // each cell's exponentials computed once (host memory; in GPU memory the
  // two passes run one after the other). Bad input throws before
  // diff_prediction is written.
  double forward_backward(const DistTensor<T, Space>& prediction,
                          const DistTensor<T, Space>& target,
                          DistTensor<T, Space>& diff_prediction);
  double forward_backward(const DistTensor<T, Space>& prediction,
                          const DistTensor<std::int64_t, Space>& target,
                          DistTensor<T, Space>& diff_prediction);

  // This rank's samples: [first_sample(), first_sample() + the size of
  // sample_losses()), its shard's N range (empty where it holds none).
  Index first_sample() const;
  // Their losses from the last forward() (zeros before any).
  const std::vector<double>& sample_losses() const;

  // "cross-entropy (class indices), mean over [0:2, 0:5, 0:32, 0:64)".
  std::string describe() const;
  // Seconds in the allreduces of the loss's sums (allreduce_wait_s) since
  // the last reset_stats().
  const LayerStats& stats() const;
  void reset_stats();

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_LOSS_H_
