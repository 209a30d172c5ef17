// GroupNormPlan: what one rank of a distributed group normalisation (or
// instance normalisation: one group per channel) does, as a value.
// plan_group_norm() derives it from the input distribution (its grid shape
// included), the options and a rank, without MPI: GroupNorm<T> executes
// it, tests check it without mpirun, and the performance model costs it.
//
//   y[n, c, ...] = scale[c] * (x - mean[n, g]) / sqrt(var[n, g] + eps)
//                  + shift[c],        g = c / (C / groups)
//
// Each (sample, group) has its own statistics, over the group's C / groups
// channels and the whole spatial extent. The ranks that share this rank's
// sample and channel coordinates (its spatial neighbours: set_ranks) hold
// the rest of its (sample, group) pairs' values, so a training forward
// allreduces two arrays of local samples x local groups doubles over them
// (the sums, then the squared deviations about the mean: numerically
// stable), and backward one of twice that. A grid may split channels
// only between whole groups: each rank then normalises its own groups.
//
//   Distribution src(Shape{2, 32, 64, 64, 64}, Shape{1, 2, 2, 1, 1});
//   GroupNormOptions o;
//   o.groups = 8;                      // 4 channels each
//   GroupNormPlan plan = plan_group_norm(src, /*rank=*/3, o);
//   plan.set_ranks;    // {1, 3}: same sample and channel block
//   plan.count;        // 4 * 64^3 values per (sample, group)
//
// InstanceNorm is groups == channels; with RunningStats::kTrack the layer
// also keeps per-channel running statistics as torch.nn.InstanceNorm does
// (the mean over the batch's samples of their statistics, the variance
// unbiased) and normalises with them in inference.
#ifndef DISTCONV_LAYERS_GROUP_NORM_PLAN_H_
#define DISTCONV_LAYERS_GROUP_NORM_PLAN_H_

#include <string>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "layers/batch_norm_plan.h"

namespace distconv {

enum class RunningStats {
  kNone,   // statistics of each sample in both modes (GroupNorm, and
           // InstanceNorm's default)
  kTrack,  // per-channel running statistics, updated in training and used
           // in inference (groups == channels only)
};

struct GroupNormOptions {
  Index groups = 1;       // divides the channels
  double epsilon = 1e-5;  // added to the variance; >= 0
  RunningStats running = RunningStats::kNone;
  double momentum = 0.1;  // of the running statistics' update; in [0, 1]
  // kInference normalises with the running statistics (kTrack only).
  BatchNormMode mode = BatchNormMode::kTraining;
};

struct GroupNormPlan {
  GroupNormOptions options;
  int rank = 0;
  // All four tensors: the input's distribution, channels-last, no halos.
  HaloLayout layout;
  Index channels = 0;     // of the whole tensor
  Index group_size = 0;   // channels per group
  // This rank's channels and the groups they make (whole groups).
  Index channel_begin = 0, local_channels = 0;
  Index group_begin = 0, local_groups = 0;
  Index samples = 0;      // in this rank's shard
  Index count = 0;        // values per (sample, group): group_size x space
  Index spatial = 0;      // cells per sample and channel, whole tensor
  Index batch = 0;        // samples of the whole tensor
  // The ranks sharing this rank's sample and channel coordinates, ascending
  // (this rank among them): the statistics set.
  std::vector<int> set_ranks;

  bool communicates() const { return set_ranks.size() > 1; }
  // "group norm, 8 groups of 4 channels over 2 ranks (4096 values per
  // sample and group), training".
  std::string describe() const;
  friend bool operator==(const GroupNormPlan& a, const GroupNormPlan& b);
  friend bool operator!=(const GroupNormPlan& a, const GroupNormPlan& b) {
    return !(a == b);
  }
};

// The plan of part `rank` of `src`'s grid. Validates from global
// information (the same distconv::Error for every rank): the shape, the
// options (groups dividing the channels, running statistics only with one
// group per channel), a channel split cutting a group (kUnsupported).
GroupNormPlan plan_group_norm(const Distribution& src, int rank,
                              const GroupNormOptions& options);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_GROUP_NORM_PLAN_H_
