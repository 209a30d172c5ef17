// GroupNormPlan without MPI: the statistics set (the ranks sharing a
// sample and channel coordinate), counts, groups per rank on channel
// splits, and the refusals.
#include "layers/group_norm_plan.h"

#include <gtest/gtest.h>

#include <vector>

#include "distconv/error.h"

namespace distconv {
namespace {

TEST(GroupNormPlan, SetIsTheRanksOfOneSampleAndChannelCoordinate) {
  const Distribution src(Shape{2, 8, 10, 6}, Shape{2, 2, 2, 1});
  GroupNormOptions o;
  o.groups = 4;
  for (int r = 0; r < src.num_parts(); ++r) {
    const GroupNormPlan p = plan_group_norm(src, r, o);
    const Shape me = src.part_coord(r);
    ASSERT_EQ(p.set_ranks.size(), 2u);
    for (int q : p.set_ranks) {
      EXPECT_EQ(src.part_coord(q)[0], me[0]);
      EXPECT_EQ(src.part_coord(q)[1], me[1]);
    }
    EXPECT_EQ(p.group_size, 2);
    EXPECT_EQ(p.local_groups, 2);
    EXPECT_EQ(p.group_begin, 2 * me[1]);
    EXPECT_EQ(p.count, 2 * 10 * 6);
    EXPECT_EQ(p.samples, 1);
  }
}

TEST(GroupNormPlan, Refusals) {
  GroupNormOptions o;
  o.groups = 3;
  EXPECT_THROW(plan_group_norm(Distribution(Shape{1, 8, 4, 4},
                                            Shape{1, 1, 1, 1}), 0, o),
               Error);
  o.groups = 2;  // 4-channel groups over 3 channel parts of 3, 3, 2
  try {
    plan_group_norm(Distribution(Shape{1, 8, 4, 4}, Shape{1, 3, 1, 1}), 0, o);
    FAIL() << "a cut group was planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
  o.groups = 8;
  o.mode = BatchNormMode::kInference;
  EXPECT_THROW(plan_group_norm(Distribution(Shape{1, 8, 4, 4},
                                            Shape{1, 1, 1, 1}), 0, o),
               Error);
  o.running = RunningStats::kTrack;
  EXPECT_NO_THROW(plan_group_norm(
      Distribution(Shape{1, 8, 4, 4}, Shape{1, 1, 1, 1}), 0, o));
}

TEST(GroupNormPlan, EqualityAndDescription) {
  const Distribution src(Shape{2, 8, 10, 6}, Shape{1, 1, 2, 1});
  GroupNormOptions o;
  o.groups = 4;
  const GroupNormPlan a = plan_group_norm(src, 0, o);
  EXPECT_EQ(a, plan_group_norm(src, 0, o));
  EXPECT_NE(a, plan_group_norm(src, 1, o));
  EXPECT_EQ(a.describe(),
            "group norm, 4 groups of 2 channels over 2 ranks (120 values "
            "per sample and group), training");
}

}  // namespace
}  // namespace distconv
