// Plans of the layers that compute from each rank's own shard: activations,
// concatenation and slicing along channels, upsampling, softmax and losses.
// Like the other plans (conv_plan.h, pool_plan.h, ...), each is built by a
// pure function from the description, the input distribution and a rank,
// without MPI, validated from global information (the same Error on every
// rank), and compared and printed as a value; the layer object executes it.
//
//   const ShardPlan p = plan_upsample(UpsampleDesc{Shape{2, 2}}, src, 3);
//   p.layout("dst");          // the output's plain layout
//   p.shard("dst");           // rank 3's part of it (global coordinates)
//   p.describe();             // "upsample on rank 3: src [...) -> dst [...)"
//
// These layers exchange no halos: their layouts are the plain ones (the
// distribution, channels-last, no halos), and their passes accept any
// layout of the same distribution. The loss alone communicates: it sums
// per-sample values over the ranks holding the same samples and totals
// over the sample blocks; the plan lists those sums (`reductions`).
#ifndef DISTCONV_LAYERS_SHARD_PLAN_H_
#define DISTCONV_LAYERS_SHARD_PLAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "distconv/activation_desc.h"
#include "distconv/box.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/loss_desc.h"
#include "distconv/upsample_desc.h"

namespace distconv {

// Channels [begin, end) of a tensor (concat and slice).
struct ChannelRange {
  Index begin = 0;
  Index end = 0;
  Index size() const { return end - begin; }
  friend bool operator==(const ChannelRange& a, const ChannelRange& b) {
    return a.begin == b.begin && a.end == b.end;
  }
};

// Slice backward: what happens to the channels outside the range.
enum class OtherChannels { kZero, kKeep };

struct SoftmaxOptions {
  SoftmaxKind kind = SoftmaxKind::kSoftmax;
};

// One tensor of the plan. Gradients share their tensor's entry.
struct ShardTensor {
  std::string name;   // "src", "dst", "src0", "prediction", "target", ...
  HaloLayout layout;  // the distribution, channels-last, no halos
  friend bool operator==(const ShardTensor& a, const ShardTensor& b);
};

// A sum over ranks (MPI_Allreduce of doubles) a pass makes.
struct ShardReduction {
  std::string pass;        // "forward", "backward"
  std::string what;        // "per-sample losses and counts", ...
  std::vector<int> ranks;  // ascending, this rank among them
  Index values = 0;        // doubles summed
  friend bool operator==(const ShardReduction& a, const ShardReduction& b);
};

struct ShardPlan {
  std::string layer;  // "relu", "concat", "upsample", "softmax", "loss", ...
  int rank = 0;
  std::vector<ShardTensor> tensors;        // inputs first, then outputs
  std::vector<ShardReduction> reductions;  // in the order the passes run

  // The tensor called `name`; kInvalidArgument if the plan has none.
  const ShardTensor& tensor(std::string_view name) const;
  const HaloLayout& layout(std::string_view name) const {
    return tensor(name).layout;
  }
  // This rank's part of that tensor, in global coordinates.
  Box shard(std::string_view name) const { return layout(name).shard(rank); }
  // Whether any pass sums over other ranks.
  bool communicates() const;
  // "upsample on rank 3: src [0:1, 0:8, 4:8, 0:8) -> dst [...)", one line,
  // then a line per reduction.
  std::string describe() const;
  friend bool operator==(const ShardPlan& a, const ShardPlan& b);
  friend bool operator!=(const ShardPlan& a, const ShardPlan& b) {
    return !(a == b);
  }
};

// src and dst (and their gradients) of one distribution (N, C, spatial...)
// with 1 to 3 spatial dimensions.
ShardPlan plan_activation(const ActivationDesc& desc, const Distribution& dist,
                          int rank);
// Inputs src0, src1, ... (at least one) in output channel order, split
// alike in N and space, and dst; grids splitting channels are refused.
ShardPlan plan_concat(const std::vector<Distribution>& srcs, int rank);
// src and dst = channels `range` of src.
ShardPlan plan_slice(const ChannelRange& range, const Distribution& src,
                     int rank);
// src and dst = desc.dst_distribution(src).
ShardPlan plan_upsample(const UpsampleDesc& desc, const Distribution& src,
                        int rank);
// src and dst, (N, C, H, W) or (N, C, D, H, W), channels whole.
ShardPlan plan_softmax(const Distribution& src, int rank,
                       const SoftmaxOptions& options = {});
// prediction and target ((N, 1, spatial) for class indices), channels
// whole; with its reductions.
ShardPlan plan_loss(const LossDesc& desc, const Distribution& prediction,
                    int rank);

// Where input i's channels start in the output of a concatenation of
// these inputs, and the output's channel count last (num_srcs + 1 values).
std::vector<Index> concat_offsets(const ShardPlan& concat);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_SHARD_PLAN_H_
