// BatchNormPlan without MPI: the statistics sets and counts of every rank
// of several grids (samples, space, channels, hybrids, uneven and empty
// shards, 3D), comparison, description and bad input.
#include "layers/batch_norm_plan.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "distconv/error.h"

namespace distconv {
namespace {

struct Case {
  std::string name;
  Shape src_shape;
  Shape grid;
};

std::vector<Case> cases() {
  return {
      {"samples", {4, 3, 5, 5}, {4, 1, 1, 1}},
      {"height_uneven", {2, 4, 7, 6}, {1, 1, 3, 1}},
      // 3 samples over 4 parts: one part is empty.
      {"samples_empty", {3, 2, 4, 4}, {4, 1, 1, 1}},
      {"hybrid", {4, 2, 9, 8}, {2, 1, 2, 2}},
      {"hybrid_3d", {2, 3, 5, 4, 6}, {2, 1, 1, 2, 1}},
      {"channels", {2, 6, 4, 4}, {1, 3, 1, 1}},
      // 2 channels over 3 parts: one part holds none.
      {"channels_empty", {2, 2, 5, 4}, {1, 3, 1, 1}},
      {"channels_hybrid", {4, 5, 6, 6}, {2, 2, 2, 1}},
      {"channels_3d", {3, 4, 3, 4, 5}, {1, 2, 1, 1, 2}},
  };
}

HaloLayout first_layout(const Distribution& src) {
  return HaloLayout(src).with_storage(StorageOrder::kChannelsLast);
}

BatchNormOptions with_stats(BatchNormStats stats) {
  BatchNormOptions o;
  o.stats = stats;
  return o;
}

// The sets partition the ranks (each rank's set holds it, and the members
// of a set name the same set); the counts are the values of the set per
// channel: the sum of its members' shards.
TEST(BatchNormPlan, SetsPartitionTheRanksAndCountTheirValues) {
  for (const Case& c : cases()) {
    const Distribution src(c.src_shape, c.grid);
    for (BatchNormStats stats :
         {BatchNormStats::kShard, BatchNormStats::kSampleBlock,
          BatchNormStats::kGlobal}) {
      SCOPED_TRACE(c.name + " " + to_string(stats));
      std::set<std::vector<int>> sets;
      for (int r = 0; r < src.num_parts(); ++r) {
        const BatchNormPlan p = plan_batch_norm(src, r, with_stats(stats));
        EXPECT_EQ(p.layout, first_layout(src));
        EXPECT_EQ(p.channels, c.src_shape[1]);
        EXPECT_EQ(p.elements, src.shard(r).volume());
        Index values = 0;
        bool holds_self = false;
        for (int q : p.set_ranks) {
          holds_self |= q == r;
          EXPECT_EQ(plan_batch_norm(src, q, with_stats(stats)).set_ranks,
                    p.set_ranks);
          values += src.shard(q).volume();
        }
        EXPECT_TRUE(holds_self);
        const Box shard = src.shard(r);
        EXPECT_EQ(p.channel_begin, shard.lower[1]);
        EXPECT_EQ(p.local_channels, shard.extent[1]);
        if (stats == BatchNormStats::kShard) {
          EXPECT_EQ(p.stats_begin, p.channel_begin);
          EXPECT_EQ(p.stats_end, p.channel_begin + p.local_channels);
        } else {
          EXPECT_EQ(p.stats_begin, 0);
          EXPECT_EQ(p.stats_end, p.channels);
        }
        // Every covered channel has the same count: the set's values are
        // count values of each.
        EXPECT_EQ(p.count * (p.stats_end - p.stats_begin), values);
        EXPECT_EQ(p.communicates(), p.set_ranks.size() > 1);
        sets.insert(p.set_ranks);
      }
      size_t covered = 0;
      for (const auto& s : sets) covered += s.size();
      EXPECT_EQ(covered, static_cast<size_t>(src.num_parts()));
      const size_t expected =
          stats == BatchNormStats::kGlobal        ? 1
          : stats == BatchNormStats::kSampleBlock ? size_t(c.grid[0])
                                                  : size_t(src.num_parts());
      EXPECT_EQ(sets.size(), expected);
    }
  }
}

TEST(BatchNormPlan, ComparesAndDescribes) {
  const Distribution src({4, 2, 9, 8}, {2, 1, 2, 2});
  const BatchNormPlan a = plan_batch_norm(src, 1);
  EXPECT_EQ(a, plan_batch_norm(src, 1));
  EXPECT_NE(a, plan_batch_norm(src, 2));
  EXPECT_NE(a, plan_batch_norm(src, 1, with_stats(BatchNormStats::kShard)));
  EXPECT_EQ(a.describe(),
            "batch norm, global statistics over 8 ranks (288 values per "
            "channel), training");
}

TEST(BatchNormPlan, BadInputThrows) {
  const Distribution src({4, 2, 9, 8}, {2, 1, 2, 2});
  EXPECT_THROW(plan_batch_norm(src, 8), Error);
  EXPECT_THROW(plan_batch_norm(src, -1), Error);
  BatchNormOptions o;
  o.epsilon = -1;
  EXPECT_THROW(plan_batch_norm(src, 0, o), Error);
  o = {};
  o.momentum = 2;
  EXPECT_THROW(plan_batch_norm(src, 0, o), Error);
  EXPECT_THROW(plan_batch_norm(Distribution({4, 2}, {1, 1}), 0), Error);
}

TEST(BatchNormPlan, DescribesItsChannelsOnAChannelSplit) {
  const Distribution src({2, 6, 4, 4}, {1, 3, 1, 1});
  EXPECT_EQ(plan_batch_norm(src, 1).describe(),
            "batch norm, global statistics over 3 ranks (32 values per "
            "channel), training, channels 2..4 of 6 here");
}

}  // namespace
}  // namespace distconv
