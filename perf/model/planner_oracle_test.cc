// The planner against an exhaustive search: on a chain and across a skip
// connection, its assignment of grids costs what the cheapest of every
// combination of candidate grids costs (the prediction of each, compared
// to 1e-12). Pure arithmetic over the same planner code as planner_test,
// and slow (about 15 s; far more under the sanitizers, which .ci/run
// leaves it out of: tag "exhaustive").
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <vector>

#include "perf/model/model_testing.h"
#include "perf/model/planner.h"
#include "perf/model/planner_networks.h"

namespace distconv {
namespace model {
namespace {

// The cheapest prediction over every combination of candidate grids.
double brute_force(const Network& net, int ranks, const Machine& m) {
  std::vector<std::vector<Shape>> cands;
  for (const Unit& u : net.units) {
    cands.push_back(
        unit_candidates(u, ranks, ChannelSplits::kWhereSupported));
  }
  std::vector<Shape> grids(net.units.size());
  double best = std::numeric_limits<double>::infinity();
  std::function<void(size_t)> go = [&](size_t i) {
    if (i == grids.size()) {
      best = std::min(best, predict(net, grids, m).step_s());
      return;
    }
    for (const Shape& g : cands[i]) {
      grids[i] = g;
      go(i + 1);
    }
  };
  go(0);
  return best;
}

TEST(Planner, FindsTheCheapestAssignmentOfAChain) {
  for (int ranks_per_node : {1, 2, 64}) {
    const Machine m = test_machine(ranks_per_node);
    const Network net = chain(4, 16);
    PlannerOptions o;
    o.ranks = 4;
    const Plan plan = plan_network(net, o, m);
    ASSERT_EQ(plan.grids.size(), net.units.size());
    EXPECT_NEAR(plan.prediction.step_s(), brute_force(net, 4, m),
                1e-12 * plan.prediction.step_s())
        << "ranks per node " << ranks_per_node;
  }
}

TEST(Planner, FindsTheCheapestAssignmentAcrossASkipConnection) {
  for (int ranks_per_node : {1, 2}) {
    const Machine m = test_machine(ranks_per_node);
    const Network net = unet(2, 16);
    PlannerOptions o;
    o.ranks = 4;
    const Plan plan = plan_network(net, o, m);
    EXPECT_NEAR(plan.prediction.step_s(), brute_force(net, 4, m),
                1e-12 * plan.prediction.step_s())
        << "ranks per node " << ranks_per_node;
  }
}

}  // namespace
}  // namespace model
}  // namespace distconv
