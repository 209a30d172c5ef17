// GroupNorm<T>: group normalisation, and instance normalisation (one group
// per channel), whose tensors are split over a ProcessGrid (samples,
// spatial dimensions, and channels between whole groups), training and
// inference, forward and backward, 1 to 3 spatial dimensions. Describe
// (GroupNormOptions), plan (plan_group_norm, layers/group_norm_plan.h; the
// constructor plans too), execute (forward, backward), many times.
//
//   y[n, c, ...] = scale[c] * (x - mean[n, g]) / sqrt(var[n, g] + eps)
//                  + shift[c]
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 2, 1});  // D, H split
//   GroupNormOptions o;
//   o.groups = 8;
//   GroupNorm<float> gn(grid, Distribution(Shape{2, 32, 64, 64, 64},
//                                          grid.shape()), o);
//   DistTensor<float> x(grid, gn.src_layout()), y(grid, gn.dst_layout());
//   gn.forward(x, scale, shift, y);              // 32 floats each, or null
//   gn.backward(x, dy, scale, dx, diff_scale, diff_shift);
//
// What scientific 3D networks use where a batch of 1-2 volumes makes batch
// normalisation's statistics useless: every statistic belongs to one
// sample, so the ranks splitting samples never reduce together; the ranks
// splitting a sample's space (the plan's set) do.
//
// Statistics are numerically stable: a first pass sums the values of each
// (sample, group) in double and an allreduce over the set gives the mean;
// a second sums the squared deviations from that mean and another gives
// the biased variance (1e4 + noise keeps the noise's precision).
// Normalisation runs in double per element and rounds once to T (16-bit
// types through float). scale and shift may be null (no affine: 1 and 0);
// diff_scale and diff_shift, when given, receive the whole gradients (C
// values, summed over every rank: every rank holds them).
//
// RunningStats::kTrack (InstanceNorm's track_running_stats, one group per
// channel): the layer keeps per-channel running mean and variance (double,
// the same on every rank; mean 0 and variance 1 at first), updated in
// each training forward as torch.nn.InstanceNorm does,
//   running = (1 - momentum) * running + momentum * batch,
// batch being the mean over the samples of each sample's mean and unbiased
// variance; in inference (set_mode) the layer normalises with them, and
// forward communicates nothing.
//
// Tensors are stored channels-last (N, [D,] H, W, C) with no halos, all
// four with the input's distribution (src_layout()); dst may be src, diff_src
// diff_dst or src. Host memory only.
//
// The constructor is collective over the grid and validates from global
// information, so bad input throws the same distconv::Error on every rank.
// forward (training) and backward are collective over the grid and check
// their arguments on every rank together first.
#ifndef DISTCONV_LAYERS_GROUP_NORM_H_
#define DISTCONV_LAYERS_GROUP_NORM_H_

#include <string>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "layers/group_norm_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h (bf16 and fp16:
// fp32 scale, shift and gradients; statistics in double).
template <typename T>
class GroupNorm {
 public:
  using Param = Compute<T>;  // scale, shift and their gradients

  GroupNorm(const ProcessGrid& grid, const Distribution& src,
            const GroupNormOptions& options);

  const GroupNormPlan& plan() const;
  Index channels() const;
  // The four tensors' layout: the input's distribution, channels-last, no
  // halos.
  const HaloLayout& src_layout() const;
  const HaloLayout& dst_layout() const { return src_layout(); }
  const HaloLayout& diff_dst_layout() const { return src_layout(); }
  const HaloLayout& diff_src_layout() const { return src_layout(); }

  // Switches between training and inference (kInference needs
  // RunningStats::kTrack). Local, no communication.
  void set_mode(BatchNormMode mode);

  // dst = the normalised src. Training: statistics per (sample, group)
  // over the set (collective over the grid), then the running statistics'
  // update. Inference: the running statistics, no communication.
  void forward(const DistTensor<T>& src, const Param* scale,
               const Param* shift, DistTensor<T>& dst);
  // The gradient of the last forward() (of its mode): src must be the
  // input that forward() normalised. Writes diff_src, and diff_scale and
  // diff_shift where given (the whole gradients, every channel).
  // Collective over the grid. Throws kState on every rank before any
  // forward().
  void backward(const DistTensor<T>& src, const DistTensor<T>& diff_dst,
                const Param* scale, DistTensor<T>& diff_src,
                Param* diff_scale, Param* diff_shift);

  // Per channel (RunningStats::kTrack): the running statistics (variance
  // unbiased), and setting them (channels() values each).
  const std::vector<double>& running_mean() const;
  const std::vector<double>& running_variance() const;
  void set_running_stats(const double* mean, const double* variance);

  // The plan's description.
  std::string describe() const;

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_GROUP_NORM_H_
