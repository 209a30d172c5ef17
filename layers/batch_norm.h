// BatchNorm<T>: batch normalisation whose tensors are split over a
// ProcessGrid (samples, channels and spatial dimensions), training and
// inference, forward and backward, 2D and 3D. Describe (BatchNormOptions),
// plan (plan_batch_norm, layers/batch_norm_plan.h; the constructor plans
// too), execute (forward, backward), many times.
//
//   y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + shift[c]
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{2, 1, 2, 1});    // N and H split
//   BatchNorm<float> bn(grid, Distribution(Shape{8, 16, 512, 512},
//                                          grid.shape()));  // kGlobal
//   DistTensor<float> x(grid, bn.src_layout()), y(grid, bn.dst_layout());
//   bn.forward(x, scale, shift, y);          // scale, shift: 16 floats each
//   DistTensor<float> dy(grid, bn.diff_dst_layout());
//   DistTensor<float> dx(grid, bn.diff_src_layout());
//   bn.backward(x, dy, scale, dx, diff_scale, diff_shift);
//   bn.set_mode(BatchNormMode::kInference);  // running statistics from now
//
// Which values one channel's statistics cover (BatchNormStats):
//   kShard        this rank's shard only; no communication.
//   kSampleBlock  the samples of this rank's grid coordinate in N, over the
//                 whole spatial extent: every rank holding the same samples
//                 (grid.sample_comm()) gets the same statistics, what a
//                 sample-parallel framework computes on each of its ranks.
//   kGlobal       the whole tensor (every sample, the whole spatial
//                 extent): the serial layer's statistics. The default.
// backward() sums diff_scale and diff_shift over the same set, so they are
// the gradient of the loss through the outputs of that set: the whole
// gradient for kGlobal; for the other two, the caller sums them over the
// sets (over grid.along(0) for kSampleBlock, over every rank for kShard),
// as a data-parallel framework's gradient allreduce does.
//
// Statistics are numerically stable: each rank reads its shard once, in
// cache-sized tiles, summing per tile the deviations from a shift near the
// mean (the mean so far) and their squares in double (float tensors too),
// so the tile's squared deviations from its own mean cancel only as far as
// the shift misses the mean; tiles merge with Chan et al.'s update. An
// allreduce of the sums gives the set's mean, and a second one merges the
// ranks' squared deviations (Chan again, about that mean) into the biased
// variance: two allreduces of C doubles. Normalisation subtracts the mean
// in T's precision without cancellation (for float, the mean as two
// floats).
// 1e4 + noise keeps the noise's precision (batch_norm_test checks it).
//
// Running statistics are held by the layer, in double, one set per rank
// (identical on the ranks of one statistics set): mean starts at 0 and
// variance at 1, and each training forward() updates them as PyTorch does,
//   running = (1 - momentum) * running + momentum * batch,
// with the batch variance unbiased (times n / (n - 1), n the number of
// values per channel in the set). A set with n = 0 (e.g. kShard on an empty
// shard) changes nothing; n = 1 updates the mean only.
//
// Tensors are stored channels-last (N, [D,] H, W, C) with no halos; all
// four tensors have the input's distribution. Scale, shift, diff_scale and
// diff_shift are plain arrays of channels() elements, replicated on every
// rank (diff_* are overwritten). In-place use (dst == src, diff_src ==
// diff_dst or src) is allowed. Supported: 1, 2 or 3 spatial dimensions,
// grids splitting N, C and spatial dimensions, uneven and empty shards.
//
// On a grid splitting channels, each channel's statistics cover the ranks
// of the set that hold it (the set's samples, the whole spatial extent);
// under kGlobal and kSampleBlock every rank still gets every channel's
// statistics, diff_scale and diff_shift. Under kShard a rank's statistics
// cover its own channels: diff_scale and diff_shift are 0 for the others
// (so the sum over every rank is still the whole gradient), batch_mean()
// and batch_variance() are 0 there, and their running statistics do not
// move.
//
// GPU memory (BatchNorm<T, DeviceSpace>, docs/gpu.md): the same plan and
// passes on DistTensor<T, DeviceSpace>, with scale, shift and their
// gradients in device memory, queued on the stream of the layer's
// Exec<DeviceSpace> (distconv/exec.h), its last argument.
// The per-channel sums run on the device (double, in a fixed order) and
// travel through the host for the reductions over the set and for the
// per-channel factors, which are computed on the host from scale (and
// shift) read from the device: every forward and backward waits for the
// stream (the work queued before it, and its own sums).
//
// The constructor is collective over the grid and validates from global
// information, so bad input throws the same distconv::Error on every rank.
// Passes are collective over the statistics set (no communication for
// kShard or inference forward). Those that communicate check their
// arguments on every rank of the set together first: a tensor whose layout
// is not the plan's, or a null array, on any rank of the set throws the
// same error on each of them (naming that rank) before anything is
// computed; the others throw on the rank that passed it.
#ifndef DISTCONV_LAYERS_BATCH_NORM_H_
#define DISTCONV_LAYERS_BATCH_NORM_H_

#include <memory>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "layers/batch_norm_plan.h"
#include "layers/layer_stats.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h in host memory
// (bf16 and fp16: fp32 scale, shift and gradients; statistics in double as for
// float; the passes on fp32 copies), and in device memory (BatchNorm<T,
// DeviceSpace>, target //layers:device_batch_norm, built only with
// --config=cuda).
template <typename T, typename Space = HostSpace>
class BatchNorm {
 public:
  using Param = Compute<T>;  // scale, shift and their gradients

  BatchNorm(const ProcessGrid& grid, const Distribution& src,
            const BatchNormOptions& options = {}, const Exec<Space>& exec = {});
  // Runs a plan made beforehand for this rank (plan_batch_norm(src,
  // grid.rank(), options)).
  BatchNorm(const ProcessGrid& grid, BatchNormPlan plan,
            const Exec<Space>& exec = {});

  // The plan it runs; options.mode is the current mode (set_mode()).
  const BatchNormPlan& plan() const;
  const BatchNormOptions& options() const;
  Index channels() const;
  // Values per channel in this rank's statistics set (n above).
  Index count() const;
  const HaloLayout& src_layout() const;  // channels-last, no halos
  const HaloLayout& dst_layout() const;  // == src_layout()
  const HaloLayout& diff_dst_layout() const;
  const HaloLayout& diff_src_layout() const;

  // Switches between training and inference (like PyTorch's train() and
  // eval()); the running statistics carry over. Local, no communication.
  void set_mode(BatchNormMode mode);

  // dst = the normalised src. Training: statistics over the set (collective
  // over it), then the running statistics' update. Inference: the running
  // statistics, no communication.
  void forward(const DistTensor<T, Space>& src, const Param* scale,
               const Param* shift, DistTensor<T, Space>& dst);
  // The gradient of the last forward() (of its mode and statistics): src
  // must be the input that forward() normalised. Writes diff_src and the
  // set's sums diff_scale = sum dy * x^, diff_shift = sum dy (collective
  // over the set in both modes). Throws kState on every rank before any
  // forward().
  void backward(const DistTensor<T, Space>& src,
                const DistTensor<T, Space>& diff_dst, const Param* scale,
                DistTensor<T, Space>& diff_src, Param* diff_scale,
                Param* diff_shift);

  // Per channel, this rank's running statistics (variance unbiased).
  const std::vector<double>& running_mean() const;
  const std::vector<double>& running_variance() const;
  // Sets them (e.g. from a checkpoint); channels() values each.
  void set_running_stats(const double* mean, const double* variance);
  // The mean and biased variance the last training forward() computed
  // (0 and 0 before any, and for an empty set).
  const std::vector<double>& batch_mean() const;
  const std::vector<double>& batch_variance() const;

  // "batch norm, global statistics over 4 ranks (8192 values per channel),
  // training: channels-last loops, 16 channels".
  std::string describe() const;
  // Seconds in the statistics' allreduces (allreduce_wait_s) since the
  // last reset_stats().
  const LayerStats& stats() const;
  void reset_stats();

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_BATCH_NORM_H_
