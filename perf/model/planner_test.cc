#include "perf/model/planner.h"

#include <gtest/gtest.h>

#include <vector>

#include "distconv/error.h"
#include "perf/model/model_testing.h"
#include "perf/model/planner_networks.h"

namespace distconv {
namespace model {
namespace {

TEST(Planner, CandidatesSplitSamplesAndSpaceOnly) {
  const std::vector<Shape> c = candidate_grids(Shape{4, 3, 8, 8}, 4);
  EXPECT_EQ(c.size(), 6u);  // 4x1x1x1, 2x1x2x1, ..., 1x1x1x4
  for (const Shape& g : c) {
    EXPECT_EQ(g.volume(), 4);
    EXPECT_EQ(g[1], 1);
  }
  // Never more parts than cells: 1 sample of 2 x 2.
  EXPECT_EQ(candidate_grids(Shape{1, 3, 2, 2}, 4),
            (std::vector<Shape>{{1, 1, 2, 2}}));
  // When nothing fits, every grid (some shards empty).
  EXPECT_EQ(candidate_grids(Shape{1, 3, 1, 1}, 2).size(), 3u);
  EXPECT_THROW(candidate_grids(Shape{1, 3, 8, 8}, 0), Error);
}

TEST(Planner, CandidatesSplitChannelsWhereEveryOpSupportsIt) {
  const Shape x{1, 8, 4, 4};
  EXPECT_EQ(candidate_grids(x, 2, ChannelSplits::kWhereSupported).size(), 3u);
  const Op conv = Op::convolution(same3x3(8, 8), x);
  const Unit plain{"conv", {conv, Op::elementwise(OpKind::kRelu, x)}, {}};
  const Unit normed{"bn", {conv, Op::elementwise(OpKind::kBatchNorm, x)}, {}};
  bool splits = false;
  for (const Shape& g :
       unit_candidates(plain, 2, ChannelSplits::kWhereSupported)) {
    splits = splits || g[1] > 1;
  }
  EXPECT_TRUE(splits);
  for (const Shape& g :
       unit_candidates(normed, 2, ChannelSplits::kWhereSupported)) {
    EXPECT_EQ(g[1], 1) << g;
  }
  for (const Shape& g : unit_candidates(plain, 2, ChannelSplits::kNone)) {
    EXPECT_EQ(g[1], 1) << g;
  }
}

// A 1x1 convolution on one 1 x 1 sample of 64 channels: only a channel
// split gives every rank work, and the planner takes it.
TEST(Planner, SplitsChannelsWhereNothingElseSplits) {
  Network net;
  net.name = "pointwise";
  const Shape x{1, 64, 1, 1};
  net.units.push_back(
      {"conv", {Op::convolution(ConvDesc::make(64, 64, {1, 1}), x)},
       {kNetworkInput}});
  PlannerOptions o;
  o.ranks = 4;
  const Plan plan = plan_network(net, o, test_machine());
  EXPECT_EQ(plan.grids[0], (Shape{1, 4, 1, 1}));
  o.channels = ChannelSplits::kNone;
  EXPECT_EQ(plan_network(net, o, test_machine()).grids[0][1], 1);
}

TEST(Planner, SplitsSamplesWhenThereAreEnoughAndSpaceWhenNot) {
  Machine m = test_machine(/*ranks_per_node=*/1);
  // Fast kernels: the interior hides little of an exchange.
  m.conv2d = {{16, {1e4, 1e4, 1e4}}};
  PlannerOptions o;
  o.ranks = 4;
  // Four samples, halos across slow links: one sample per rank.
  for (const Shape& g : plan_network(chain(4, 16), o, m).grids) {
    EXPECT_EQ(g, (Shape{4, 1, 1, 1}));
  }
  // One sample: spatial splits only.
  for (const Shape& g : plan_network(chain(1, 16), o, m).grids) {
    EXPECT_EQ(g[0], 1);
  }
}

TEST(Planner, OneGridScopeIsNeverCheaperThanPerUnit) {
  const Machine m = test_machine(/*ranks_per_node=*/2);
  const Network net = unet(2, 16);
  PlannerOptions o;
  o.ranks = 4;
  const Plan per_unit = plan_network(net, o, m);
  o.scope = PlanScope::kOneGrid;
  const Plan one = plan_network(net, o, m);
  for (const Shape& g : one.grids) EXPECT_EQ(g, one.grids[0]);
  EXPECT_LE(per_unit.prediction.step_s(), one.prediction.step_s() * (1 + 1e-12));
}

TEST(Planner, RejectsBadInput) {
  const Machine m = test_machine();
  PlannerOptions o;
  o.ranks = 0;
  EXPECT_THROW(plan_network(chain(2, 8), o, m), Error);
  Network bad = chain(2, 8);
  bad.units[2].inputs = {3};  // a later unit
  o.ranks = 2;
  EXPECT_THROW(plan_network(bad, o, m), Error);
  EXPECT_THROW(predict(chain(2, 8), std::vector<Shape>{{2, 1, 1, 1}}, m),
               Error);  // one grid for four units
}

}  // namespace
}  // namespace model
}  // namespace distconv
