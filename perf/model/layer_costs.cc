#include "perf/model/layer_costs.h"

#include "layers/adaptive_pool_plan.h"
#include "layers/batch_norm_plan.h"
#include "layers/group_norm_plan.h"
#include "layers/interpolate_plan.h"
#include "layers/pool_plan.h"
#include "perf/model/cost_terms.h"

namespace distconv {
namespace model {

// Pooling, from each representative rank's own plan (PoolPlan): forward
// and backward over the input cells its window reads, the input's halo
// exchange forward and its reverse backward.
Cost pooling_cost(const Op& op, const Distribution& src, const Machine& m) {
  const double slow = m.compute_slowdown(src.num_parts());
  return slowest(src, [&](int part) {
    const PoolPlan p = plan_pooling(op.pool, src, part);
    const HaloTraffic h = halo_traffic(p.src_layout(), part, m);
    const double cells =
        p.kernel ? static_cast<double>(p.kernel->src_extent.volume()) : 0;
    Cost cost;
    cost.compute_s = elementwise_time(cells, m.pool_s, 2, m, slow);
    cost.halo_s = 2 * h.time;
    cost.halo_messages = 2 * h.messages;
    cost.halo_bytes = 2 * h.bytes;
    return cost;
  });
}

// Batch normalisation (global statistics, training), from each
// representative rank's own plan (BatchNormPlan): two passes over its
// shard; forward's two allreduces of the channels' sums and squared
// deviations, backward's one of both gradient sums, over the statistics
// set (every channel's, on a grid splitting channels too).
Cost batch_norm_cost(const Distribution& src, const Machine& m) {
  const double slow = m.compute_slowdown(src.num_parts());
  return slowest(src, [&](int part) {
    const BatchNormPlan p = plan_batch_norm(src, part);
    Cost cost;
    cost.compute_s = elementwise_time(static_cast<double>(p.elements),
                                      m.batch_norm_s, 2, m, slow);
    if (p.communicates()) {
      const double bytes = static_cast<double>(p.channels) * kDoubleBytes;
      const int set = static_cast<int>(p.set_ranks.size());
      cost.allreduce_s = 2 * allreduce_time(bytes, set, m) +
                         allreduce_time(2 * bytes, set, m);
    }
    return cost;
  });
}

// Group normalisation from each representative rank's plan: forward's
// sums and deviations (two passes) and the normalisation, backward's sums
// and its pass; forward's two allreduces of samples x groups doubles over
// the set, backward's one of twice that, and the parameter gradients'
// allreduce of 2 C doubles over every rank.
Cost group_norm_cost(const Op& op, const Distribution& src,
                     const Machine& m) {
  const double slow = m.compute_slowdown(src.num_parts());
  GroupNormOptions o;
  o.groups = op.groups;
  return slowest(src, [&](int part) {
    const GroupNormPlan p = plan_group_norm(src, part, o);
    Cost cost;
    const double elements = static_cast<double>(src.shard(part).volume());
    cost.compute_s = elementwise_time(elements, m.batch_norm_s, 2, m, slow);
    const double bytes =
        static_cast<double>(p.samples * p.local_groups) * kDoubleBytes;
    const int set = static_cast<int>(p.set_ranks.size());
    cost.allreduce_s =
        2 * allreduce_time(bytes, set, m) + allreduce_time(2 * bytes, set, m) +
        allreduce_time(2 * static_cast<double>(p.channels) * kDoubleBytes,
                       src.num_parts(), m);
    return cost;
  });
}

// Linear interpolation: the input's halo exchange forward and its reverse
// backward, and a pass over the output shard each way.
Cost interpolate_cost(const Op& op, const Distribution& src,
                      const Machine& m) {
  const double slow = m.compute_slowdown(src.num_parts());
  return slowest(src, [&](int part) {
    const InterpolatePlan p = plan_interpolate(op.interpolate, src, part);
    const HaloTraffic h = halo_traffic(p.src_layout, part, m);
    Cost cost;
    const double cells =
        static_cast<double>(p.dst_layout.shard(part).volume());
    cost.compute_s = elementwise_time(cells, m.pool_s, 2, m, slow);
    cost.halo_s = 2 * h.time;
    cost.halo_messages = 2 * h.messages;
    cost.halo_bytes = 2 * h.bytes;
    return cost;
  });
}

// Adaptive pooling: a pass over the input shard each way, and an
// allreduce of the set's whole output (forward) and output gradient
// (backward).
Cost adaptive_pool_cost(const Op& op, const Distribution& src,
                        const Machine& m) {
  const double slow = m.compute_slowdown(src.num_parts());
  return slowest(src, [&](int part) {
    const AdaptivePoolPlan p = plan_adaptive_pool(op.adaptive, src, part);
    const Box shard = src.shard(part);
    Cost cost;
    cost.compute_s = elementwise_time(static_cast<double>(shard.volume()),
                                      m.pool_s, 2, m, slow);
    const double bytes = static_cast<double>(shard.extent[0] *
                                             shard.extent[1] * p.outputs) *
                         kDoubleBytes;
    const int set = static_cast<int>(p.set_ranks.size());
    cost.allreduce_s = 2 * allreduce_time(bytes, set, m);
    return cost;
  });
}

Cost elementwise_cost(const Op& op, const Distribution& src,
                      const Machine& m) {
  const int ranks = src.num_parts();
  const double slow = m.compute_slowdown(ranks);
  double per_element = 0, allreduce = 0;
  switch (op.kind) {
    case OpKind::kRelu:
    case OpKind::kDropout:
      per_element = m.relu_s;
      break;
    case OpKind::kConcat:
      per_element = m.concat_s;
      break;
    case OpKind::kLoss:
      per_element = m.loss_s;
      allreduce = allreduce_time(2 * kDoubleBytes, ranks, m);
      break;
    default:
      break;
  }
  return slowest(src, [&](int part) {
    Cost cost;
    cost.compute_s = elementwise_time(
        static_cast<double>(src.shard(part).volume()), per_element, 2, m, slow);
    cost.allreduce_s = allreduce;
    return cost;
  });
}

}  // namespace model
}  // namespace distconv
