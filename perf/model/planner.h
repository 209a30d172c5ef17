// The planner: given a network (network.h), a rank count and a machine, it
// proposes each unit's process grid, and so where to redistribute between
// units, by minimising the modelled step time.
//
//   PlannerOptions o;
//   o.ranks = 8;
//   Plan plan = plan_network(net, o, machine);
//   plan.grids[i];            // unit i's grid
//   plan.prediction.step_s(); // the modelled step with those grids
//
// Candidates are the grids splitting samples and spatial dimensions into
// `ranks` parts, and channels too for a unit whose operations all run on
// such grids (convolutions of one group, ReLU, pooling; not batch norm or
// the losses), none more parts than the dimension has cells (when no such
// grid exists, every grid of `ranks` parts is a candidate: some shards are
// then empty). A convolution on a grid splitting channels is costed in the
// scheme its Op's options name. The search is exact dynamic programming over the units in order;
// its state is the grids of the units whose outputs are still to be read
// (one for a chain, two across a U-Net's skip connection), so it finds the
// cheapest assignment under the model without trying every combination.
// While searching, a unit's input is taken as balanced over its grid (a
// chain of even splits keeps it so); the returned prediction follows the
// exact distributions (network.h's predict), and where uneven splits make
// it worse than the best single grid's, that grid is the plan. Candidates
// come with the most sample parts first, so that ties (halos hidden
// behind compute) go to the split without halos.
//
// PlanScope::kOneGrid instead picks the best single grid for every unit
// (what an example without redistributions between its layers can run).
#ifndef DISTCONV_PERF_MODEL_PLANNER_H_
#define DISTCONV_PERF_MODEL_PLANNER_H_

#include <vector>

#include "distconv/shape.h"
#include "perf/model/machine.h"
#include "perf/model/network.h"

namespace distconv {
namespace model {

enum class PlanScope { kPerUnit, kOneGrid };
// Whether the candidates may split channels (where a unit supports it).
enum class ChannelSplits { kNone, kWhereSupported };

struct PlannerOptions {
  int ranks = 1;
  PlanScope scope = PlanScope::kPerUnit;
  ChannelSplits channels = ChannelSplits::kWhereSupported;  // kPerUnit only
};

struct Plan {
  std::vector<Shape> grids;  // one per unit
  Prediction prediction;
};

// The grids of `ranks` parts over `tensor`'s N and spatial dimensions, and
// its channels with kWhereSupported (see above), in a fixed order.
std::vector<Shape> candidate_grids(
    const Shape& tensor, int ranks,
    ChannelSplits channels = ChannelSplits::kNone);
// Unit `u`'s candidates: channel splits only where `channels` allows and
// every operation of the unit supports them.
std::vector<Shape> unit_candidates(const Unit& u, int ranks,
                                   ChannelSplits channels);

// Throws kInvalidArgument for ranks < 1 or an invalid network.
Plan plan_network(const Network& net, const PlannerOptions& options,
                  const Machine& m);

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_PLANNER_H_
