#include "distconv/conv_geometry.h"

#include <gtest/gtest.h>

#include <random>

#include "distconv/error.h"

namespace distconv {
namespace {

// A random 2D or 3D convolution with a small input, and a random uneven
// distribution of its spatial dimensions (empty parts included).
struct Case {
  ConvDesc desc;
  Shape src_shape;
  Distribution dist;
};

Case random_case(std::mt19937_64& rng) {
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  const int k = u(2, 3);
  while (true) {
    ConvDesc c = ConvDesc::make(2, 3, Shape::filled(k, 1));
    Shape src = Shape::filled(k + 2, 1);
    src[0] = u(1, 3);
    src[1] = 2;
    std::vector<BlockPartition> parts{BlockPartition::balanced(src[0], u(1, 2)),
                                      BlockPartition::balanced(2, 1)};
    for (int j = 0; j < k; ++j) {
      c.kernel[j] = u(1, 4);
      c.stride[j] = u(1, 3);
      c.dilation[j] = u(1, 2);
      c.padding_lower[j] = u(0, 3);
      c.padding_upper[j] = u(0, 3);
      c.padding_mode.push_back(u(0, 1) ? PaddingMode::kCircular
                                       : PaddingMode::kZeros);
      src[j + 2] = u(1, 12);
      std::vector<Index> sizes;
      Index left = src[j + 2];
      const int p = u(1, 4);
      for (int q = 0; q + 1 < p; ++q) {
        sizes.push_back(u(0, left));
        left -= sizes.back();
      }
      sizes.push_back(left);
      parts.push_back(BlockPartition::from_sizes(sizes));
    }
    try {
      c.validate(src);
    } catch (const Error&) {
      continue;
    }
    return {c, src, Distribution(parts)};
  }
}

Index span(const ConvDesc& c, int j) {
  return (c.kernel[j] - 1) * c.dilation[j] + 1;
}

// The window's local problem has consistent shapes.
void ExpectConsistent(const ConvDesc& c, const ConvWindow& w) {
  for (int j = 0; j < c.spatial_dims(); ++j) {
    ASSERT_GE(w.padding_lower[j], 0);
    ASSERT_GE(w.padding_upper[j], 0);
    ASSERT_EQ(w.src.extent[j + 2] + w.padding_lower[j] + w.padding_upper[j],
              (w.dst.extent[j + 2] - 1) * c.stride[j] + span(c, j))
        << w.src << " " << w.dst;
  }
}

TEST(ConvGeometry, WindowsHoldEveryTapAndNothingElse) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const Case t = random_case(rng);
    const ConvGeometry g(t.desc, t.src_shape);
    for (int p = 0; p < t.dist.num_parts(); ++p) {
      // Forward on a part's output box: every tap inside the tensor lies in
      // the window; the window starts and ends on taps of the box's edges.
      const ConvWindow f = g.forward_window(g.dst_distribution(t.dist).shard(p));
      if (f.dst.empty()) continue;
      ExpectConsistent(t.desc, f);
      // Backward-data on the part's input shard.
      const Box s = t.dist.shard(p);
      const ConvWindow b = g.backward_data_window(s);
      if (b.dst.empty()) continue;
      ExpectConsistent(t.desc, b);
      ASSERT_TRUE(s.contains(b.src));
      for (int j = 0; j < t.desc.spatial_dims(); ++j) {
        const ConvDesc& c = t.desc;
        for (Index o = 0; o < g.dst_shape()[j + 2]; ++o) {
          for (Index q = 0; q < c.kernel[j]; ++q) {
            const Index i = o * c.stride[j] - c.padding_lower[j] +
                            q * c.dilation[j];
            const bool in_src =
                i >= s.lower[j + 2] && i < s.upper()[j + 2];
            if (!in_src) continue;
            ASSERT_TRUE(o >= b.dst.lower[j + 2] && o < b.dst.upper()[j + 2])
                << "output " << o << " reads " << i;
            ASSERT_TRUE(i >= b.src.lower[j + 2] && i < b.src.upper()[j + 2]);
          }
        }
      }
    }
  }
}

TEST(ConvGeometry, OutputShardsLineUpAndHalosCoverTheirWindows) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    const Case t = random_case(rng);
    const ConvGeometry g(t.desc, t.src_shape);
    const Distribution dst = g.dst_distribution(t.dist);
    ASSERT_EQ(dst.global_shape(), g.dst_shape());
    const HaloLayout in = g.src_layout(t.dist, dst, StorageOrder::kChannelsLast);
    const HaloLayout dd =
        g.diff_dst_layout(t.dist, dst, StorageOrder::kChannelsFirst);
    for (int p = 0; p < t.dist.num_parts(); ++p) {
      const Box src_shard = t.dist.shard(p), dst_shard = dst.shard(p);
      // A part with no inputs has no outputs.
      if (src_shard.empty()) {
        ASSERT_TRUE(dst_shard.empty());
      }
      const ConvWindow f = g.forward_window(dst_shard);
      ASSERT_TRUE(in.buffer_box(p).contains(f.src)) << p;
      const ConvWindow b =
          g.backward_data_window(g.diff_src_box(t.dist, p));
      ASSERT_TRUE(dd.buffer_box(p).contains(b.dst)) << p;
    }
  }
}

// With circular padding the input's halos reach past the ends (periodic
// there), and the input-gradient boxes tile the padded input exactly: the
// shards, and each end's padding cells on the part at that end.
TEST(ConvGeometry, CircularPaddingExtendsTheEndParts) {
  std::mt19937_64 rng(17);
  int circular = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const Case t = random_case(rng);
    const ConvGeometry g(t.desc, t.src_shape);
    const HaloLayout dx =
        g.diff_src_layout(t.dist, StorageOrder::kChannelsLast);
    Shape padded = t.src_shape;
    for (int j = 0; j < t.desc.spatial_dims(); ++j) {
      const Boundary want =
          t.desc.circular(j) ? Boundary::kPeriodic : Boundary::kOpen;
      ASSERT_EQ(dx.boundary(j + 2), want);
      if (!t.desc.circular(j)) continue;
      ++circular;
      padded[j + 2] += t.desc.padding_lower[j] + t.desc.padding_upper[j];
    }
    Index cells = 0;
    for (int p = 0; p < t.dist.num_parts(); ++p) {
      const Box box = g.diff_src_box(t.dist, p);
      ASSERT_EQ(dx.buffer_box(p), box) << p;
      ASSERT_TRUE(box.contains(t.dist.shard(p)));
      cells += box.extent.volume();
    }
    ASSERT_EQ(cells, padded.volume());
  }
  EXPECT_GT(circular, 1000);
}

// Splits are disjoint and complete, and the interior needs no halo.
TEST(ConvGeometry, SplitsCoverTheBoxAndTheInteriorStaysHome) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 3000; ++trial) {
    const Case t = random_case(rng);
    const ConvGeometry g(t.desc, t.src_shape);
    const Distribution dst = g.dst_distribution(t.dist);
    for (int p = 0; p < t.dist.num_parts(); ++p) {
      const Box src_shard = t.dist.shard(p), dst_shard = dst.shard(p);
      for (int dir = 0; dir < 2; ++dir) {
        const Box& box = dir == 0 ? dst_shard : src_shard;
        const BoxSplit split = dir == 0
                                   ? g.split_forward(dst_shard, src_shard)
                                   : g.split_backward_data(src_shard, dst_shard);
        Index volume = split.interior.volume();
        ASSERT_TRUE(box.contains(split.interior));
        for (const Box& b : split.boundary) {
          ASSERT_FALSE(b.empty());
          ASSERT_TRUE(box.contains(b));
          ASSERT_TRUE(intersect(b, split.interior).empty());
          volume += b.volume();
        }
        ASSERT_EQ(volume, box.volume());  // disjoint and inside: complete
        // The core: the interior and the inner boundary boxes.
        ASSERT_TRUE(box.contains(split.core));
        ASSERT_TRUE(split.core.contains(split.interior));
        Index core_volume = split.interior.volume();
        for (const Box& b : split.boundary) {
          if (split.core.contains(b)) core_volume += b.volume();
        }
        ASSERT_EQ(core_volume, split.core.volume());
        if (split.interior.empty()) continue;
        if (dir == 0) {
          const ConvWindow w = g.forward_window(split.interior);
          ASSERT_TRUE(w.src.empty() || src_shard.contains(w.src));
        } else {
          const ConvWindow w = g.backward_data_window(split.interior);
          ASSERT_TRUE(w.dst.empty() || dst_shard.contains(w.dst));
        }
      }
    }
  }
}

TEST(ConvGeometry, SameConvolutionKeepsTheInputDistribution) {
  ConvDesc c = ConvDesc::make(4, 8, {3, 3});
  c.padding_lower = c.padding_upper = {1, 1};
  const Distribution src(Shape{2, 4, 10, 7}, Shape{2, 1, 3, 2});
  const ConvGeometry g(c, src.global_shape());
  const Distribution dst = g.dst_distribution(src);
  for (int d : {0, 2, 3}) EXPECT_EQ(dst.partition(d), src.partition(d));
  const HaloLayout in = g.src_layout(src, dst, StorageOrder::kChannelsFirst);
  EXPECT_EQ(in.widths(0).lower, (Shape{0, 0, 0, 0}));  // top-left corner
  EXPECT_EQ(in.widths(0).upper, (Shape{0, 0, 1, 1}));
  EXPECT_EQ(in.widths(3).lower, (Shape{0, 0, 1, 1}));  // middle row, right
  EXPECT_EQ(in.widths(3).upper, (Shape{0, 0, 1, 0}));
}

TEST(ConvGeometry, StrideTwoHalvesTheShards) {
  ConvDesc c = ConvDesc::make(1, 1, {3, 3});
  c.stride = {2, 2};
  c.padding_lower = c.padding_upper = {1, 1};
  const Distribution src(Shape{1, 1, 8, 8}, Shape{1, 1, 2, 1});
  const ConvGeometry g(c, src.global_shape());
  const Distribution dst = g.dst_distribution(src);
  EXPECT_EQ(dst.shard(0), (Box{{0, 0, 0, 0}, {1, 1, 2, 4}}));
  EXPECT_EQ(dst.shard(1), (Box{{0, 0, 2, 0}, {1, 1, 2, 4}}));
  // Outputs 2, 3 read rows 3..7: one halo row below the shard [4, 8).
  const HaloLayout in = g.src_layout(src, dst, StorageOrder::kChannelsFirst);
  EXPECT_EQ(in.widths(1).lower, (Shape{0, 0, 1, 0}));
  EXPECT_EQ(in.widths(0).upper, (Shape{0, 0, 0, 0}));
}

// A transposed convolution's output distribution: lined up with the
// input so that the convolution maps it back to the same distribution.
TEST(ConvGeometry, SourceDistributionLinesUpWithTheOutputs) {
  ConvDesc up = ConvDesc::make(2, 2, {4, 4});  // a U-Net 4x4 stride-2 up
  up.stride = {2, 2};
  up.padding_lower = up.padding_upper = {1, 1};
  const ConvGeometry g(up, Shape{1, 2, 16, 10});
  const Distribution dst(Shape{1, 2, 8, 5}, Shape{1, 1, 3, 2});  // uneven
  const Distribution src = g.src_distribution(dst);
  EXPECT_EQ(src.partition(2), BlockPartition::from_sizes({6, 6, 4}));
  EXPECT_EQ(src.partition(3), BlockPartition::from_sizes({6, 4}));
  EXPECT_EQ(g.dst_distribution(src), dst);
  // Empty output parts (more parts than outputs) give empty input parts,
  // except that the last non-empty part takes the inputs up to the end.
  const ConvGeometry small(up, Shape{1, 2, 4, 10});
  const Distribution thin(Shape{1, 2, 2, 5}, Shape{1, 1, 4, 1});
  const Distribution wide = small.src_distribution(thin);
  EXPECT_EQ(wide.partition(2), BlockPartition::from_sizes({2, 2, 0, 0}));
  EXPECT_EQ(small.dst_distribution(wide), thin);
}

TEST(ConvGeometry, ChannelSplitsInsideAGroupBalanceTheFilters) {
  ConvDesc c = ConvDesc::make(5, 4, {3, 3});
  c.padding_lower = c.padding_upper = {1, 1};
  const ConvGeometry g(c, Shape{1, 5, 4, 4});
  // Channels 2, 0, 3 (an empty part) over 3 parts, H over 2.
  const Distribution src(
      {BlockPartition::balanced(1, 1), BlockPartition::from_sizes({2, 0, 3}),
       BlockPartition::balanced(4, 2), BlockPartition::balanced(4, 1)});
  EXPECT_EQ(g.channel_split(src), ChannelSplit::kInsideGroups);
  const Distribution dst = g.dst_distribution(src);
  EXPECT_EQ(dst.partition(1), BlockPartition::balanced(4, 3));
  EXPECT_EQ(g.src_distribution(dst).partition(1), BlockPartition::balanced(5, 3));
  // Halos depend on the samples and cells only: the part without input
  // channels has none (an empty buffer), the others the same ones.
  const HaloLayout x = g.src_layout(src, dst, StorageOrder::kChannelsLast);
  for (int p = 0; p < src.num_parts(); ++p) {
    const bool empty = src.shard(p).empty();
    SCOPED_TRACE(p);
    EXPECT_EQ(x.widths(p).lower[2], empty || src.part_coord(p)[2] == 0 ? 0 : 1);
    EXPECT_EQ(x.widths(p).upper[2], empty || src.part_coord(p)[2] == 1 ? 0 : 1);
  }
  // Filters 2, 1, 1: the output gradient's halos likewise on every part.
  const HaloLayout dy = g.diff_dst_layout(src, dst, StorageOrder::kChannelsLast);
  for (int p = 0; p < dst.num_parts(); ++p) {
    EXPECT_EQ(dy.widths(p).lower[2], dst.part_coord(p)[2] == 0 ? 0 : 1) << p;
  }
}

TEST(ConvGeometry, ChannelSplitsBetweenGroupsKeepTheGroups) {
  ConvDesc c = ConvDesc::make(6, 9, {1, 1});
  c.groups = 3;  // 2 input and 3 output channels per group
  const ConvGeometry g(c, Shape{1, 6, 4, 4});
  const Distribution src(
      {BlockPartition::balanced(1, 1), BlockPartition::from_sizes({4, 0, 2}),
       BlockPartition::balanced(4, 1), BlockPartition::balanced(4, 1)});
  EXPECT_EQ(g.channel_split(src), ChannelSplit::kWholeGroups);
  EXPECT_EQ(g.dst_distribution(src).partition(1),
            BlockPartition::from_sizes({6, 0, 3}));
  EXPECT_EQ(g.channel_split(Distribution(Shape{1, 6, 4, 4}, Shape{1, 1, 1, 1})),
            ChannelSplit::kNone);
}

TEST(ConvGeometry, ChannelSplitsThatCutAGroupAreUnsupported) {
  ConvDesc c = ConvDesc::make(4, 4, {1, 1});
  c.groups = 2;
  const ConvGeometry g(c, Shape{1, 4, 4, 4});
  try {
    g.dst_distribution(Distribution(Shape{1, 4, 4, 4}, Shape{1, 4, 1, 1}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("channel parts {1, 1, 1, 1} cut a group"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace distconv
