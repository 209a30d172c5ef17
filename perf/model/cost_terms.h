// The terms the operation costs of op_cost.cc and layer_costs.cc are
// built from: a kernel call, a per-element pass, what a part receives in
// a halo exchange, the slowest of the representative parts.
#ifndef DISTCONV_PERF_MODEL_COST_TERMS_H_
#define DISTCONV_PERF_MODEL_COST_TERMS_H_

#include "distconv/halo_layout.h"
#include "halo/halo_plan.h"
#include "perf/model/machine.h"
#include "perf/model/op_cost.h"

namespace distconv {
namespace model {

inline constexpr double kFloatBytes = 4, kDoubleBytes = 8;

// One kernel call of `flops` at `flops_per_s` (none when there is no work).
inline double pass_time(double flops, double flops_per_s, const Machine& m,
                        double slowdown) {
  if (flops <= 0) return 0;
  return (m.call_overhead_s + flops / flops_per_s) * slowdown;
}

// A per-element operation over `elements` cells, `calls` kernel calls.
inline double elementwise_time(double elements, double seconds_per_element,
                               int calls, const Machine& m,
                               double slowdown) {
  if (elements <= 0) return 0;
  return (calls * m.call_overhead_s + elements * seconds_per_element) *
         slowdown;
}

struct HaloTraffic {
  double time = 0, messages = 0, bytes = 0;
};

// What `part` receives in a halo exchange of `layout` (the sends of a
// symmetric exchange are the same size). `rank_of(q)`: the rank holding
// part q of the layout's grid (the part itself, unless the layout lies
// over a sub-grid such as a channel slice).
template <typename RankOf>
HaloTraffic halo_traffic(const HaloLayout& layout, int part, RankOf rank_of,
                         const Machine& m) {
  HaloTraffic h;
  for (const HaloMessage& msg : halo_receives(layout, part)) {
    const double bytes = static_cast<double>(msg.local.volume()) * kFloatBytes;
    h.time += m.link(rank_of(part), rank_of(msg.peer)).time(bytes, 1);
    h.messages += 1;
    h.bytes += bytes;
  }
  return h;
}

inline HaloTraffic halo_traffic(const HaloLayout& layout, int part,
                               const Machine& m) {
  return halo_traffic(layout, part, [](int q) { return q; }, m);
}

// The cost of the slowest of the representative parts.
template <typename PerPart>
Cost slowest(const Distribution& d, PerPart per_part) {
  Cost worst;
  bool first = true;
  for (int part : representative_parts(d)) {
    const Cost c = per_part(part);
    if (first || c.total() > worst.total()) worst = c;
    first = false;
  }
  return worst;
}

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_COST_TERMS_H_
