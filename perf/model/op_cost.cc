#include "perf/model/op_cost.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "distconv/conv_geometry.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "halo/halo_plan.h"
#include "layers/conv_plan.h"
#include "layers/deconv_plan.h"
#include "layers/group_norm_plan.h"
#include "perf/model/cost_terms.h"
#include "perf/model/layer_costs.h"

namespace distconv {
namespace model {
namespace {

// The allreduce of a layer's weight and bias gradients over `ranks`.
double weight_allreduce_time(const Shape& weights, ConvBias bias,
                             Index out_channels, int ranks,
                             const Machine& m) {
  const Index values =
      weights.volume() + (bias == ConvBias::kAdd ? out_channels : 0);
  return allreduce_time(kFloatBytes * static_cast<double>(values), ranks, m);
}

// What a rank receives in the halo exchange of one of a plan's tensors:
// the caller's `layout` (over the grid), or the full-channel one when the
// plan has it (over the channel slice).
HaloTraffic plan_halo_traffic(const ConvPlan& p, const HaloLayout& layout,
                              const std::optional<ConvChannelTensor>& full,
                              const Machine& m) {
  if (!full) return halo_traffic(layout, p.rank, m);
  return halo_traffic(
      full->layout, p.slice_rank,
      [&](int q) { return p.slice_part_rank(q); }, m);
}

// An allgather or reduce-scatter of a full-channel tensor over the
// members that share it: a ring (P - 1 steps, each moving a part), and
// the copies around it (the member's block packed or unpacked, the whole
// tensor through the staging buffer and back).
double channel_collective_time(const ConvPlan& p, const ConvChannelTensor& t,
                               const Machine& m, double slowdown) {
  const int members = t.block.parts();
  if (members <= 1) return 0;
  const double full = static_cast<double>(p.slice_elements(t));
  const double block = static_cast<double>(p.block_elements(t));
  // The channel group's members differ in the channel coordinate only;
  // the ring crosses nodes when its first and last members are on two.
  const Shape grid = p.src_layout.distribution().grid_shape();
  Shape first = p.src_layout.distribution().part_coord(p.rank), last = first;
  first[1] = 0;
  last[1] = grid[1] - 1;
  const LinkCost& link =
      m.link(static_cast<int>(linear_index(first, grid)),
             static_cast<int>(linear_index(last, grid)));
  const double q = members;
  return link.time((q - 1) / q * full * kFloatBytes, q - 1) +
         (2 * full + block) * m.copy_s * slowdown;
}

// The seconds of a plan's local convolution at the machine's rate for its
// pass and channels (none without a call).
double call_time(const std::optional<ConvKernelCall>& call, const Machine& m,
                 double slowdown) {
  if (!call) return 0;
  const ConvKernelCall& k = *call;
  const double c = static_cast<double>(k.desc.in_channels);
  const double f = static_cast<double>(k.desc.out_channels);
  return pass_time(k.flops(),
                   m.conv_flops(k.desc.spatial_dims(), k.pass, c, f), m,
                   slowdown);
}

// The seconds of `pieces`, one call each.
double pieces_time(const std::vector<ConvPiece>& pieces, const Machine& m,
                   double slowdown) {
  double t = 0;
  for (const ConvPiece& p : pieces) t += call_time(p.kernel, m, slowdown);
  return t;
}

// A convolution, from each representative rank's own plan (ConvPlan): the
// pieces of each pass at the machine's rate, the halo exchanges of the
// tensors the plan exchanges (the full-channel ones over the channel slice
// when channels are split), hidden behind the early pieces; the channel
// collectives (not overlapped); the weight-gradient allreduce over the
// ranks holding the same block, hidden behind backward-data.
Cost convolution_cost(const Op& op, const Distribution& src,
                      const Machine& m) {
  const int ranks = src.num_parts();
  const double slow = m.compute_slowdown(ranks);
  const int block_ranks =
      static_cast<int>(src.grid_shape().volume() / src.grid_shape()[1]);
  return slowest(src, [&](int part) {
    const ConvPlan p = plan_convolution(op.conv, src, part, op.conv_options);
    const double f_early = pieces_time(p.forward_early, m, slow);
    const double tf = f_early + pieces_time(p.forward_late, m, slow);
    const double d_early = pieces_time(p.data_early, m, slow);
    const double td = d_early + pieces_time(p.data_late, m, slow);
    const double tw = pieces_time(p.weights_early, m, slow) +
                      pieces_time(p.weights_late, m, slow);
    const HaloTraffic hx = plan_halo_traffic(p, p.src_layout, p.x_full, m);
    const HaloTraffic hdy =
        plan_halo_traffic(p, p.diff_dst_layout, p.dy_full, m);
    double channel = 0;
    // Forward gathers x and sums y; backward-data gathers dy (shared with
    // backward-weights) and sums dx; swapped pieces cost one more step
    // each way.
    for (const auto* t : {&p.x_full, &p.y_full, &p.dy_full, &p.dx_full}) {
      if (*t) channel += channel_collective_time(p, **t, m, slow);
    }
    if (p.channels.transposed()) {  // one message each way, per pass
      const double piece_bytes =
          static_cast<double>(p.y_piece_size + p.dy_piece_size) * kFloatBytes;
      channel += m.slowest_link(ranks).time(piece_bytes, 2);
    }
    const double gradient_values =
        static_cast<double>(p.weights_block.volume()) +
        (op.conv.bias == ConvBias::kAdd
             ? static_cast<double>(p.bias_block.volume())
             : 0);
    const double allreduce =
        allreduce_time(kFloatBytes * gradient_values, block_ranks, m);
    Cost cost;
    cost.compute_s = tf + td + tw;
    cost.halo_s =
        std::max(0.0, hx.time - f_early) + std::max(0.0, hdy.time - d_early);
    cost.channel_s = channel;
    cost.allreduce_s = std::max(0.0, allreduce - td);
    cost.halo_messages = hx.messages + hdy.messages;
    cost.halo_bytes = hx.bytes + hdy.bytes;
    return cost;
  });
}

// A transposed convolution, from each representative rank's own plan
// (DeconvPlan): its three local convolutions at the machine's rates, the
// halo exchange of the output (reverse, forward) and of the output
// gradient (backward-data and backward-weights each), none overlapped; the
// weight-gradient allreduce over every rank, hidden behind backward-data.
Cost deconvolution_cost(const Op& op, const Distribution& src,
                        const Machine& m) {
  const DeconvDesc& desc = op.deconv;
  const int ranks = src.num_parts();
  const double slow = m.compute_slowdown(ranks);
  const double allreduce = weight_allreduce_time(
      desc.weights_shape(), desc.bias, desc.out_channels, ranks, m);
  return slowest(src, [&](int part) {
    const DeconvPlan p = plan_deconvolution(desc, src, part);
    const double td = call_time(p.data_kernel, m, slow);
    const HaloTraffic h = halo_traffic(p.dst_layout(), part, m);
    Cost cost;
    cost.compute_s = call_time(p.forward_kernel, m, slow) + td +
                     call_time(p.weights_kernel, m, slow);
    cost.halo_s = 3 * h.time;
    cost.allreduce_s = std::max(0.0, allreduce - td);
    cost.halo_messages = 3 * h.messages;
    cost.halo_bytes = 3 * h.bytes;
    return cost;
  });
}

std::string dims(const Shape& s) {
  std::ostringstream out;
  for (int d = 0; d < s.ndims(); ++d) out << (d ? "x" : "") << s[d];
  return out.str();
}

// Non-empty parts of partition `p` among those holding [lo, hi).
double parts_over(const BlockPartition& p, Index lo, Index hi) {
  double n = 0;
  for (int q = p.owner(lo); q <= p.owner(hi - 1); ++q) n += p.size(q) > 0;
  return n;
}

// The first and last part of `d` whose shards meet `box` (non-empty).
std::pair<int, int> peer_range(const Distribution& d, const Box& box) {
  Shape lo = box.lower, hi = box.upper();
  for (int k = 0; k < box.ndims(); ++k) {
    lo[k] = d.partition(k).owner(box.lower[k]);
    hi[k] = d.partition(k).owner(box.upper()[k] - 1);
  }
  return {d.part_index(lo), d.part_index(hi)};
}

// Messages from `mine` to the parts of `other` it meets (itself excluded
// when it keeps something).
double peers(const Distribution& other, const Box& mine, bool keeps) {
  if (mine.empty()) return 0;
  double n = 1;
  for (int k = 0; k < mine.ndims(); ++k) {
    n *= parts_over(other.partition(k), mine.lower[k], mine.upper()[k]);
  }
  return n - (keeps ? 1 : 0);
}

}  // namespace

Cost& Cost::operator+=(const Cost& o) {
  compute_s += o.compute_s;
  halo_s += o.halo_s;
  allreduce_s += o.allreduce_s;
  redistribute_s += o.redistribute_s;
  channel_s += o.channel_s;
  halo_messages += o.halo_messages;
  halo_bytes += o.halo_bytes;
  return *this;
}

Op Op::convolution(const ConvDesc& d, const Shape& src,
                   const ConvolutionOptions& options) {
  d.validate(src);
  Op op{OpKind::kConvolution, src};
  op.conv = d;
  op.conv_options = options;
  return op;
}

Op Op::deconvolution(const DeconvDesc& d, const Shape& src) {
  d.validate(src);
  Op op{OpKind::kDeconvolution, src};
  op.deconv = d;
  return op;
}

Op Op::pooling(const PoolDesc& d, const Shape& src) {
  d.validate(src);
  Op op{OpKind::kPooling, src};
  op.pool = d;
  return op;
}

Op Op::group_norm(Index groups, const Shape& src) {
  GroupNormOptions o;
  o.groups = groups;
  plan_group_norm(Distribution(src, Shape::filled(src.ndims(), 1)), 0, o);
  Op op{OpKind::kGroupNorm, src};
  op.groups = groups;
  return op;
}

Op Op::interpolation(const InterpolateDesc& d, const Shape& src) {
  d.validate(src);
  Op op{OpKind::kInterpolate, src};
  op.interpolate = d;
  return op;
}

Op Op::adaptive_pooling(const AdaptivePoolDesc& d, const Shape& src) {
  d.validate(src);
  Op op{OpKind::kAdaptivePool, src};
  op.adaptive = d;
  return op;
}

Op Op::elementwise(OpKind kind, const Shape& src) {
  require(kind == OpKind::kBatchNorm || kind == OpKind::kRelu ||
              kind == OpKind::kConcat || kind == OpKind::kLoss ||
              kind == OpKind::kDropout,
          ErrorKind::kInvalidArgument,
          "Op::elementwise takes batch norm, ReLU, concat, loss or dropout");
  require(src.ndims() >= 3, ErrorKind::kInvalidArgument,
          "an operation's input is N x C x spatial, not ", src);
  return Op{kind, src};
}

Shape Op::dst_shape() const {
  switch (kind) {
    case OpKind::kConvolution:
      return conv.dst_shape(src_shape);
    case OpKind::kDeconvolution:
      return deconv.dst_shape(src_shape);
    case OpKind::kPooling:
      return pool.dst_shape(src_shape);
    case OpKind::kInterpolate:
      return interpolate.dst_shape(src_shape);
    case OpKind::kAdaptivePool:
      return adaptive.dst_shape(src_shape);
    default:
      return src_shape;
  }
}

Distribution Op::dst_distribution(const Distribution& src) const {
  switch (kind) {
    case OpKind::kConvolution:  // the plan's (channel pieces included)
      return plan_convolution(conv, src, 0, conv_options).dst;
    case OpKind::kDeconvolution:
      return ConvGeometry(deconv.adjoint(), dst_shape()).src_distribution(src);
    case OpKind::kPooling:
      return ConvGeometry(pool.window_conv(src_shape[1]), src_shape)
          .dst_distribution(src);
    case OpKind::kInterpolate:
      return interpolate.dst_distribution(src);
    case OpKind::kAdaptivePool:
      return adaptive.dst_distribution(src);
    default:
      return src;
  }
}

std::string Op::describe() const {
  std::ostringstream out;
  switch (kind) {
    case OpKind::kConvolution:
      out << "conv " << conv.in_channels << "->" << conv.out_channels << " "
          << dims(conv.kernel);
      break;
    case OpKind::kDeconvolution:
      out << "deconv " << deconv.in_channels << "->" << deconv.out_channels
          << " " << dims(deconv.kernel) << "/" << deconv.stride[0];
      break;
    case OpKind::kPooling:
      out << "pool " << dims(pool.kernel);
      break;
    case OpKind::kBatchNorm:
      out << "batchnorm";
      break;
    case OpKind::kRelu:
      out << "relu";
      break;
    case OpKind::kConcat:
      out << "concat";
      break;
    case OpKind::kLoss:
      out << "loss";
      break;
    case OpKind::kGroupNorm:
      out << "groupnorm " << groups;
      break;
    case OpKind::kInterpolate:
      out << "interpolate " << dims(interpolate.size);
      break;
    case OpKind::kAdaptivePool:
      out << "adaptive " << to_string(adaptive.kind) << " pool "
          << dims(adaptive.size);
      break;
    case OpKind::kDropout:
      out << "dropout";
      break;
  }
  return out.str();
}

Cost op_cost(const Op& op, const Distribution& src, const Machine& m) {
  require(src.global_shape() == op.src_shape, ErrorKind::kShapeMismatch,
          op.describe(), ": input distributed as ", src.global_shape(),
          " but the operation reads ", op.src_shape);
  require(src.grid_shape()[1] == 1 || op.kind == OpKind::kConvolution ||
              op.kind == OpKind::kPooling || op.kind == OpKind::kRelu ||
              op.kind == OpKind::kBatchNorm ||
              op.kind == OpKind::kGroupNorm ||
              op.kind == OpKind::kInterpolate ||
              op.kind == OpKind::kAdaptivePool ||
              op.kind == OpKind::kDropout,
          ErrorKind::kUnsupported,
          "the performance model splits channels for convolutions, pooling, "
          "batch and group norm, interpolation, dropout and ReLU only, not "
          "for ", op.describe(), " (grid ", src.grid_shape(), ")");
  switch (op.kind) {
    case OpKind::kConvolution:
      return convolution_cost(op, src, m);
    case OpKind::kDeconvolution:
      return deconvolution_cost(op, src, m);
    case OpKind::kPooling:
      return pooling_cost(op, src, m);
    case OpKind::kBatchNorm:
      return batch_norm_cost(src, m);
    case OpKind::kGroupNorm:
      return group_norm_cost(op, src, m);
    case OpKind::kInterpolate:
      return interpolate_cost(op, src, m);
    case OpKind::kAdaptivePool:
      return adaptive_pool_cost(op, src, m);
    default:
      return elementwise_cost(op, src, m);
  }
}

Cost redistribution_cost(const Distribution& from, const Distribution& to,
                         const Machine& m) {
  require(from.global_shape() == to.global_shape() &&
              from.num_parts() == to.num_parts(),
          ErrorKind::kShapeMismatch, "redistribution from ",
          from.global_shape(), " over ", from.num_parts(), " parts to ",
          to.global_shape(), " over ", to.num_parts());
  if (from == to) return {};
  const double slow = m.compute_slowdown(from.num_parts());
  return slowest(from, [&](int part) {
    const Box mine = from.shard(part), wanted = to.shard(part);
    const Box kept_box = intersect(mine, wanted);
    const double kept = static_cast<double>(kept_box.volume());
    const double send = static_cast<double>(mine.volume()) - kept;
    const double recv = static_cast<double>(wanted.volume()) - kept;
    const double messages = std::max(peers(to, mine, kept > 0),
                                     peers(from, wanted, kept > 0));
    // Inside the node when every peer is (ranks fill nodes in grid order,
    // so the peers lie between the lowest and the highest).
    const int node = part / m.ranks_per_node;
    bool inside = true;
    for (const auto& [d, box] : {std::pair{&to, mine}, {&from, wanted}}) {
      if (box.empty()) continue;
      const auto [lo, hi] = peer_range(*d, box);
      inside = inside && lo / m.ranks_per_node == node &&
               hi / m.ranks_per_node == node;
    }
    const LinkCost& link = inside ? m.intra : m.inter;
    Cost c;
    c.redistribute_s =
        link.time(std::max(send, recv) * kFloatBytes, messages) +
        (kept + send + recv) * m.copy_s * slow;
    return c;
  });
}

double allreduce_time(double bytes, int ranks, const Machine& m) {
  if (ranks <= 1) return 0;
  const LinkCost& link = m.slowest_link(ranks);
  const double p = ranks;
  const double ring = link.time(2 * (p - 1) / p * bytes, 2 * (p - 1));
  const double steps = std::ceil(std::log2(p));
  const double doubling = link.time(steps * bytes, steps);
  return std::min(ring, doubling);
}

std::vector<int> representative_parts(const Distribution& d) {
  const Shape grid = d.grid_shape();
  std::vector<std::vector<Index>> coords(grid.ndims());
  for (int k = 0; k < grid.ndims(); ++k) {
    const Index p = grid[k];
    const std::set<Index> s = {0, std::min<Index>(1, p - 1), (p - 1) / 2,
                               p / 2, p - 1};
    coords[k].assign(s.begin(), s.end());
  }
  std::vector<int> parts;
  std::vector<size_t> pick(grid.ndims(), 0);
  while (true) {
    Shape c = grid;
    for (int k = 0; k < grid.ndims(); ++k) c[k] = coords[k][pick[k]];
    parts.push_back(d.part_index(c));
    int k = grid.ndims() - 1;
    while (k >= 0 && ++pick[k] == coords[k].size()) pick[k--] = 0;
    if (k < 0) break;
  }
  return parts;
}

}  // namespace model
}  // namespace distconv
