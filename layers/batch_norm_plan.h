// BatchNormPlan: what one rank of a distributed batch normalisation does,
// as a value. plan_batch_norm() derives it from the input distribution
// (its grid shape included), the options and a rank, without MPI:
// BatchNorm<T> executes it, tests check it without mpirun, and the
// performance model costs it.
//
//   Distribution src(Shape{8, 16, 512, 512}, Shape{2, 1, 2, 1});
//   BatchNormPlan plan = plan_batch_norm(src, /*rank=*/3);
//   plan.set_ranks;   // {0, 1, 2, 3}: global statistics
//   plan.count;       // 8 * 512 * 512 values per channel
//
// The statistics set (BatchNormStats) decides which ranks reduce together:
// this rank alone (kShard), the ranks holding its samples (kSampleBlock),
// every rank (kGlobal). A training forward allreduces two arrays of
// `channels` doubles over the set (the sums, then the squared deviations);
// backward one of 2 * channels (both parameter gradients); none when the
// set is one rank.
//
// On a grid splitting channels each rank holds a block of them; a set
// other than kShard spans every channel block, and each rank contributes
// zeros for the channels it does not hold, so one allreduce over the set
// sums every channel over exactly the ranks holding it (its samples and
// space). Under kShard a rank's statistics cover its own channels only.
#ifndef DISTCONV_LAYERS_BATCH_NORM_PLAN_H_
#define DISTCONV_LAYERS_BATCH_NORM_PLAN_H_

#include <string>
#include <vector>

#include "distconv/box.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "kernels/norm_activation.h"

namespace distconv {

enum class BatchNormStats { kShard, kSampleBlock, kGlobal };
// kTraining: normalise with the batch's statistics and update the running
// ones; kInference: normalise with the running statistics (no
// communication in forward).
enum class BatchNormMode { kTraining, kInference };

const char* to_string(
    BatchNormStats stats);                  // "shard", "sample_block", "global"
const char* to_string(BatchNormMode mode);  // "training", "inference"
const char* to_string(NormActivation act);  // "none", "relu"

struct BatchNormOptions {
  BatchNormStats stats = BatchNormStats::kGlobal;
  BatchNormMode mode = BatchNormMode::kTraining;
  double epsilon = 1e-5;  // added to the variance; >= 0
  double momentum = 0.1;  // of the running statistics' update; in [0, 1]
  // kRelu: the layer computes relu(batch_norm(x)) in one sweep over memory
  // forward and differentiates through both backward, where the ReLU's
  // gate is recomputed from src (no ReLU output kept or read). Host
  // memory; the GPU's layer refuses it (kUnsupported).
  NormActivation activation = NormActivation::kNone;
};

struct BatchNormPlan {
  BatchNormOptions options;
  int rank = 0;
  // All four tensors: the input's distribution, channels-last, no halos.
  HaloLayout layout;
  Index channels = 0;  // of the whole tensor
  // This rank's channels: [channel_begin, channel_begin + local_channels)
  // (all of them unless the grid splits channels).
  Index channel_begin = 0;
  Index local_channels = 0;
  // The channels the set's statistics cover: [stats_begin, stats_end),
  // every channel except under kShard on a grid splitting channels.
  Index stats_begin = 0;
  Index stats_end = 0;
  Index elements = 0;  // in this rank's shard
  Index count = 0;     // values per covered channel in the statistics set
  // The ranks of the statistics set, ascending (this rank among them).
  std::vector<int> set_ranks;

  // Whether the passes reduce over other ranks.
  bool communicates() const { return set_ranks.size() > 1; }
  // "batch norm, global statistics over 4 ranks (8192 values per channel),
  // training" (in the options' mode).
  std::string describe() const;
  friend bool operator==(const BatchNormPlan& a, const BatchNormPlan& b);
  friend bool operator!=(const BatchNormPlan& a, const BatchNormPlan& b) {
    return !(a == b);
  }
};

// The plan of part `rank` of `src`'s grid. Validates from global
// information (the same distconv::Error for every rank): the shape and
// the options' values.
BatchNormPlan plan_batch_norm(const Distribution& src, int rank,
                              const BatchNormOptions& options = {});

}  // namespace distconv

#endif  // DISTCONV_LAYERS_BATCH_NORM_PLAN_H_
