// The modelled time of one layer operation for one training step (forward
// and backward) on a given input distribution: a latency-bandwidth-compute
// model evaluated from the same plans the layers build (ConvGeometry's
// output distribution, halo layouts and interior/boundary splits,
// make_halo_plan's messages, plan_redistribution's boxes), with the
// machine's measured throughputs (machine.h).
//
// Per rank r of the grid:
//  - compute: each kernel call of a convolution pass (one per piece of its
//    plan) costs call_overhead + FLOPs / throughput (the pass's GFLOP/s at
//    the piece's channel counts), FLOPs = 2 * N * F * (C / groups) *
//    prod(kernel) * (the piece's output cells); the other
//    operations cost their per-element time times the rank's elements;
//    all times the machine's compute_slowdown (ranks sharing cores);
//  - halo exchange: for each message the rank receives, latency + bytes /
//    bandwidth of the link to its sender (inside the node or between
//    nodes; ranks fill nodes in grid order);
//  - allreduce (weight gradients, batch-norm statistics, the loss): the
//    cheaper of a ring (2 (P - 1) latencies, 2 (P - 1) / P of the bytes)
//    and recursive doubling (log2 P latencies and all the bytes), over the
//    slowest link the P ranks span.
// Overlap as the layers do it: a convolution's forward hides its halo
// exchange behind its plan's early pieces (the output cells that need no
// halo), its backward-data hides the output gradient's exchange the same
// way, and its weight-gradient allreduce
// travels during backward-data. Pooling and transposed convolutions do not
// overlap. The operation's cost is that of its slowest rank (the ranks meet
// at every exchange). Only a few ranks are evaluated: per grid dimension
// the first, second, middle and last coordinates (edges, interiors and
// the larger shards of an uneven split), so large grids stay cheap.
//
// A convolution is costed from each representative rank's own ConvPlan
// (layers/conv_plan.h): its pieces, the halos of the tensors it exchanges,
// and, on grids splitting channels, its scheme's channel collectives (ring
// allgathers and reduce-scatters over the channel group, not overlapped)
// and the allreduce over the ranks holding the same weight block.
//
// Group normalisation, adaptive pooling and linear interpolation are
// costed from their plans too: group normalisation's two passes and its
// allreduces over the ranks sharing a sample's space; adaptive pooling's
// pass over the shard and its two allreduces of the set's whole output;
// interpolation's halo exchange and its reverse, and a pass per output
// cell (the pooling throughput stands in for the interpolation's). Dropout
// is a pass per element (ReLU's throughput).
//
// Not modelled: splitting channels for other operations than convolution,
// pooling, ReLU, batch and group norm, adaptive pooling, interpolation and
// dropout (kUnsupported),
// memory capacity, contention between messages sharing a link, and
// noise.
#ifndef DISTCONV_PERF_MODEL_OP_COST_H_
#define DISTCONV_PERF_MODEL_OP_COST_H_

#include <string>
#include <vector>

#include "distconv/adaptive_pool_desc.h"
#include "distconv/conv_desc.h"
#include "distconv/deconv_desc.h"
#include "distconv/distribution.h"
#include "distconv/interpolate_desc.h"
#include "distconv/pool_desc.h"
#include "distconv/shape.h"
#include "layers/conv_options.h"
#include "perf/model/machine.h"

namespace distconv {
namespace model {

enum class OpKind {
  kConvolution,
  kDeconvolution,
  kPooling,
  kBatchNorm,
  kRelu,
  kConcat,  // its src_shape is the concatenated (output) shape
  kLoss,
  kGroupNorm,     // and instance normalisation (groups == channels)
  kInterpolate,   // linear (bilinear, trilinear)
  kAdaptivePool,  // adaptive average or max pooling
  kDropout,
};

// One operation and the global shape of its input.
struct Op {
  OpKind kind = OpKind::kRelu;
  Shape src_shape;
  ConvDesc conv;      // kConvolution
  ConvolutionOptions conv_options;  // kConvolution: its plan's options
  DeconvDesc deconv;  // kDeconvolution
  PoolDesc pool;      // kPooling
  Index groups = 1;   // kGroupNorm
  InterpolateDesc interpolate;  // kInterpolate
  AdaptivePoolDesc adaptive;    // kAdaptivePool

  static Op convolution(const ConvDesc& d, const Shape& src,
                        const ConvolutionOptions& options = {});
  static Op deconvolution(const DeconvDesc& d, const Shape& src);
  static Op pooling(const PoolDesc& d, const Shape& src);
  // kBatchNorm, kRelu, kConcat, kLoss, kDropout.
  static Op elementwise(OpKind kind, const Shape& src);
  static Op group_norm(Index groups, const Shape& src);
  static Op interpolation(const InterpolateDesc& d, const Shape& src);
  static Op adaptive_pooling(const AdaptivePoolDesc& d, const Shape& src);

  Shape dst_shape() const;
  // The output distribution the layer's plan derives from `src`.
  Distribution dst_distribution(const Distribution& src) const;
  std::string describe() const;  // e.g. "conv 16->32 3x3"
};

// Seconds of one training step (forward and backward) on the slowest rank,
// and what they are made of (exposed communication only).
struct Cost {
  double compute_s = 0;
  double halo_s = 0;         // halo exchanges not hidden behind compute
  double allreduce_s = 0;    // allreduces not hidden behind compute
  double redistribute_s = 0; // moving a tensor to another grid
  double channel_s = 0;      // a convolution's channel collectives
  double halo_messages = 0;  // that rank's received halo messages
  double halo_bytes = 0;     // and their bytes
  double total() const {
    return compute_s + halo_s + allreduce_s + redistribute_s + channel_s;
  }
  Cost& operator+=(const Cost& o);
};

// The op's cost on `src` (a split of channels throws kUnsupported but for
// convolutions, pooling and ReLU).
Cost op_cost(const Op& op, const Distribution& src, const Machine& m);

// Moving a tensor from `from` to `to` (Redistribution): each rank sends
// what it holds and the other does not, one message per peer, and copies
// what it keeps. Zero when they are the same.
Cost redistribution_cost(const Distribution& from, const Distribution& to,
                         const Machine& m);

// An allreduce of `bytes` over `ranks` ranks (0 for one rank).
double allreduce_time(double bytes, int ranks, const Machine& m);

// The parts the model evaluates (see above), as part indices.
std::vector<int> representative_parts(const Distribution& d);

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_OP_COST_H_
