// The channel-parallel index math: the scheme's pc x pf, the output's
// filter pieces, the piece permutation, and the full-channel layouts.
#include "layers/internal/channel_plan.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "distconv/error.h"

namespace distconv::internal {
namespace {

// A 1 x C x 8 x 8 input over 1 x p x 2 x 1 parts (C balanced).
Distribution input(Index c, int p) {
  return Distribution(Shape{1, c, 8, 8}, Shape{1, p, 2, 1});
}

ConvGeometry geometry(Index c, Index f, Index groups = 1) {
  ConvDesc d = ConvDesc::make(c, f, {3, 3});
  d.padding_lower = d.padding_upper = {1, 1};
  d.groups = groups;
  return ConvGeometry(d, Shape{1, c, 8, 8});
}

ChannelBlocks plan_for(int p, ChannelParallelism scheme, int blocks = 0) {
  ConvolutionOptions o;
  o.channels = scheme;
  o.channel_blocks = blocks;
  return channel_plan(geometry(12, 12), input(12, p), o);
}

TEST(ChannelPlan, SchemesAreShapesOfTheChannelGroup) {
  using CP = ChannelParallelism;
  const ChannelBlocks out = plan_for(6, CP::kStationaryOutput);
  EXPECT_TRUE(out.split);
  EXPECT_EQ(out.pc, 1);
  EXPECT_EQ(out.pf, 6);
  const ChannelBlocks in = plan_for(6, CP::kStationaryInput);
  EXPECT_EQ(in.pc, 6);
  EXPECT_EQ(in.pf, 1);
  // Stationary weights: the squarest split with pc <= pf, or as asked.
  for (auto [p, pc] : {std::pair{4, 2}, {6, 2}, {8, 2}, {9, 3}, {7, 1}}) {
    const ChannelBlocks w = plan_for(p, CP::kStationaryWeights);
    EXPECT_EQ(w.pc, pc) << p;
    EXPECT_EQ(w.pc * w.pf, p) << p;
  }
  EXPECT_EQ(plan_for(6, CP::kStationaryWeights, 3).pf, 2);
  EXPECT_FALSE(out.transposed());
  EXPECT_TRUE(plan_for(6, CP::kStationaryWeights).transposed());
  try {
    plan_for(6, CP::kStationaryWeights, 4);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("channel_blocks = 4 does not divide "
                                         "the grid's 6 channel parts"),
              std::string::npos)
        << e.what();
  }
}

TEST(ChannelPlan, NoSplitWithoutCutGroups) {
  ConvolutionOptions o;
  o.channels = ChannelParallelism::kStationaryWeights;
  o.channel_blocks = 5;  // ignored: nothing to split
  EXPECT_FALSE(channel_plan(geometry(12, 12), input(12, 1), o).split);
  // Whole groups per part: each part convolves its own groups.
  EXPECT_FALSE(channel_plan(geometry(12, 6, 3), input(12, 3), o).split);
}

TEST(ChannelPlan, PieceOwnersAndMakersAreInversePermutations) {
  for (auto [pc, pf] : {std::pair{1, 5}, {5, 1}, {2, 3}, {3, 2}, {4, 4}}) {
    ChannelBlocks c;
    c.split = true;
    c.pc = pc;
    c.pf = pf;
    std::set<int> owners;
    for (int r = 0; r < pc * pf; ++r) {
      owners.insert(c.piece_owner(r));
      EXPECT_EQ(c.piece_maker(c.piece_owner(r)), r) << pc << "x" << pf;
      // Member (i, j) = r's piece i of filter block j goes to j * pc + i.
      EXPECT_EQ(c.piece_owner(r), (r % pf) * pc + r / pf);
    }
    EXPECT_EQ(owners.size(), static_cast<size_t>(pc * pf));
  }
}

TEST(ChannelPlan, FilterPiecesAreBlocksCutIntoPieces) {
  ChannelBlocks c;
  c.split = true;
  c.pc = 2;
  c.pf = 3;
  // 11 filters over 3 blocks (4, 4, 3), each cut into 2 pieces.
  const Distribution d = with_filter_pieces(
      Distribution(Shape{1, 11, 8, 8}, Shape{1, 6, 1, 1}), c, 11);
  EXPECT_EQ(d.partition(1), BlockPartition::from_sizes({2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(d.partition(2), BlockPartition::balanced(8, 1));
  // Degenerate shapes are the balanced filters of the other two schemes.
  for (auto [pc, pf] : {std::pair{1, 4}, {4, 1}}) {
    c.pc = pc;
    c.pf = pf;
    EXPECT_EQ(with_filter_pieces(
                  Distribution(Shape{1, 10, 8, 8}, Shape{1, 4, 1, 1}), c, 10)
                  .partition(1),
              BlockPartition::balanced(10, 4));
  }
}

TEST(ChannelPlan, SubPartitionSpansItsParts) {
  const BlockPartition p = BlockPartition::from_sizes({3, 0, 2, 4});
  EXPECT_EQ(sub_partition(p, 1, 2), BlockPartition::from_sizes({0, 2}));
  EXPECT_EQ(sub_partition(p, 0, 4), BlockPartition::from_sizes({3, 0, 2, 4}));
}

TEST(ChannelPlan, FullChannelLayoutsKeepTheCellsAndHalos) {
  const Distribution d = input(6, 3);
  std::vector<HaloWidths> widths(d.num_parts(), HaloWidths::none(4));
  for (int part = 0; part < d.num_parts(); ++part) {
    widths[part].lower[2] = d.part_coord(part)[2] == 1 ? 1 : 0;
  }
  const HaloLayout full = full_channel_layout(HaloLayout(d, widths), 4, "src");
  EXPECT_EQ(full.distribution().grid_shape(), (Shape{1, 1, 2, 1}));
  EXPECT_EQ(full.distribution().global_shape(), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(full.widths(1).lower[2], 1);
  EXPECT_EQ(full.storage_order(), StorageOrder::kChannelsLast);
  // Members of one channel group with different halos are refused.
  widths[d.part_index(Shape{0, 0, 1, 0})].lower[2] = 2;
  try {
    full_channel_layout(HaloLayout(d, widths), 4, "src");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("src layout gives the parts of one "
                                         "channel group different halos"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(channel_slice_shape(Shape{2, 3, 4, 1}), (Shape{2, 1, 4, 1}));
}

}  // namespace
}  // namespace distconv::internal
