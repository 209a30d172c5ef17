#include "halo/halo_plan.h"

#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "distconv/error.h"
#include "gtest/gtest.h"
#include "tests/layout_cases.h"

namespace distconv {
namespace {

using testing::source_of;

// Checks one layout's plans for every part:
//  * receive boxes lie in the halo (inside the buffer, outside the shard),
//    are disjoint, and hold exactly the buffer cells that have a source;
//  * every received cell's source is owned by the sending peer;
//  * each receive of r from p equals a send of p to r with the same tag,
//    covering the same global cells.
void ExpectConsistentPlans(const HaloLayout& layout) {
  const Distribution& dist = layout.distribution();
  std::vector<HaloPlan> plans;
  for (int p = 0; p < layout.num_parts(); ++p) {
    plans.push_back(make_halo_plan(layout, p));
  }
  Index total_sends = 0, total_recvs = 0;
  for (int r = 0; r < layout.num_parts(); ++r) {
    const HaloPlan& plan = plans[r];
    const Box buffer = layout.buffer_box(r);
    const Shape local = buffer.extent;
    std::vector<int> covered(local.volume(), 0);
    for (const HaloMessage& m : plan.recvs) {
      ASSERT_FALSE(m.local.empty());
      ASSERT_TRUE((Box{Shape::filled(local.ndims(), 0), local}).contains(m.local));
      // Cell by cell: in the halo, sourced from the peer, not seen before.
      for (Index i = 0; i < m.local.volume(); ++i) {
        const Shape cell = m.local.lower + unravel(i, m.local.extent);
        ASSERT_FALSE(layout.interior(r).contains(cell));
        const auto src = source_of(layout, cell + buffer.lower);
        ASSERT_TRUE(src.has_value()) << "received a cell past the boundary";
        ASSERT_EQ(dist.part_index(dist.owner(*src)), m.peer);
        ASSERT_EQ(covered[linear_index(cell, local)]++, 0) << "overlap";
      }
      // The matching send, in the peer's coordinates.
      const HaloPlan& peer = plans[m.peer];
      const auto src = *source_of(layout, m.local.lower + buffer.lower);
      const Box expected{src - layout.buffer_box(m.peer).lower, m.local.extent};
      int matches = 0;
      for (const HaloMessage& s : peer.sends) {
        if (s.peer == r && s.tag == m.tag) {
          ++matches;
          EXPECT_EQ(s.local, expected);
        }
      }
      ASSERT_EQ(matches, 1) << "part " << r << " receives from " << m.peer;
    }
    // Every halo cell with a source is received.
    for (Index i = 0; i < local.volume(); ++i) {
      const Shape cell = unravel(i, local);
      if (layout.interior(r).contains(cell)) continue;
      ASSERT_EQ(covered[i], source_of(layout, cell + buffer.lower) ? 1 : 0)
          << "cell " << cell << " of part " << r;
    }
    total_sends += plan.sends.size();
    total_recvs += plan.recvs.size();
    for (const HaloMessage& s : plan.sends) {
      ASSERT_TRUE(layout.interior(r).contains(s.local)) << "sends a halo cell";
    }
  }
  EXPECT_EQ(total_sends, total_recvs);
}

TEST(HaloPlan, ConsistentOverRandomLayouts) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const HaloLayout layout = testing::random_layout(rng, 24);
    SCOPED_TRACE(::testing::Message()
                 << "trial " << trial << ": "
                 << layout.distribution().global_shape() << " over "
                 << layout.distribution().grid_shape());
    ExpectConsistentPlans(layout);
    if (HasFatalFailure()) return;
  }
}

TEST(HaloPlan, ConsistentOverTheTableOfCases) {
  for (int n : {1, 2, 3, 4, 6, 8}) {
    for (const Shape& grid : testing::factorizations(n, 5)) {
      for (const testing::LayoutCase& c : testing::layout_cases(grid)) {
        SCOPED_TRACE(c.name + " over " + grid.to_string());
        ExpectConsistentPlans(c.layout);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(HaloPlan, TwoByTwoGridHasEdgesAndACorner) {
  const HaloLayout layout(Distribution(Shape{1, 1, 8, 8}, Shape{1, 1, 2, 2}),
                          HaloWidths::symmetric({0, 0, 1, 1}));
  const HaloPlan plan = make_halo_plan(layout, 0);
  ASSERT_EQ(plan.recvs.size(), 3u);
  EXPECT_EQ(plan.recvs[0].peer, 1);  // W neighbour: a 4x1 column
  EXPECT_EQ(plan.recvs[0].local, (Box{{0, 0, 1, 5}, {1, 1, 4, 1}}));
  EXPECT_EQ(plan.recvs[1].peer, 2);  // H neighbour: a 1x4 row
  EXPECT_EQ(plan.recvs[1].local, (Box{{0, 0, 5, 1}, {1, 1, 1, 4}}));
  EXPECT_EQ(plan.recvs[2].peer, 3);  // the diagonal corner
  EXPECT_EQ(plan.recvs[2].local, (Box{{0, 0, 5, 5}, {1, 1, 1, 1}}));
  EXPECT_EQ(plan.recv_volume(), 9);
  EXPECT_EQ(plan.send_volume(), 9);
}

// Packed one after the other, and seen in channels-last storage order.
TEST(HaloPlan, PackedOffsetsAndStorageBoxes) {
  const HaloLayout layout(Distribution(Shape{1, 3, 8, 8}, Shape{1, 1, 2, 2}),
                          HaloWidths::symmetric({0, 0, 1, 1}));
  const HaloPlan plan = make_halo_plan(layout, 0);
  EXPECT_EQ(packed_offsets(plan.recvs), (std::vector<Index>{0, 12, 24, 27}));
  EXPECT_EQ(packed_offsets({}), (std::vector<Index>{0}));
  const HaloLayout last = layout.with_storage(StorageOrder::kChannelsLast);
  const std::vector<Box> boxes = storage_boxes(last, plan.recvs);
  ASSERT_EQ(boxes.size(), 3u);
  EXPECT_EQ(boxes[0], (Box{{0, 1, 5, 0}, {1, 4, 1, 3}}));  // N, H, W, C
  EXPECT_EQ(storage_boxes(layout, plan.recvs)[0], plan.recvs[0].local);
}

TEST(HaloPlan, WideHaloReadsFromPartsFurtherAway) {
  // W = 6 over 3 parts of 2: an upper width of 3 on the first part needs
  // both cells of part 1 and one of part 2.
  const HaloLayout layout(Distribution(Shape{1, 1, 1, 6}, Shape{1, 1, 1, 3}),
                          HaloWidths{{0, 0, 0, 0}, {0, 0, 0, 3}});
  const HaloPlan plan = make_halo_plan(layout, 0);
  ASSERT_EQ(plan.recvs.size(), 2u);
  EXPECT_EQ(plan.recvs[0].peer, 1);
  EXPECT_EQ(plan.recvs[0].local.extent[3], 2);
  EXPECT_EQ(plan.recvs[1].peer, 2);
  EXPECT_EQ(plan.recvs[1].local.extent[3], 1);
}

TEST(HaloPlan, PeriodicSinglePartSendsToItself) {
  const HaloLayout layout(
      Distribution(Shape{1, 1, 4, 4}, Shape{1, 1, 1, 1}),
      HaloWidths::symmetric({0, 0, 1, 0}),
      {Boundary::kOpen, Boundary::kOpen, Boundary::kPeriodic, Boundary::kOpen});
  const HaloPlan plan = make_halo_plan(layout, 0);
  ASSERT_EQ(plan.recvs.size(), 2u);
  ASSERT_EQ(plan.sends.size(), 2u);
  EXPECT_NE(plan.recvs[0].tag, plan.recvs[1].tag);
  for (const HaloMessage& m : plan.recvs) EXPECT_EQ(m.peer, 0);
}

TEST(HaloPlan, RejectsAPartOutsideTheGrid) {
  const HaloLayout layout(Distribution(Shape{1, 1, 4, 4}, Shape{1, 1, 2, 1}));
  EXPECT_THROW(make_halo_plan(layout, 2), Error);
}

}  // namespace
}  // namespace distconv
