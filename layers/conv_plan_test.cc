// ConvPlan without MPI: properties over every rank of several grids (sample,
// spatial and channel splits, uneven and empty shards, the three channel
// schemes), comparison and description.
#include "layers/conv_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distconv/error.h"
#include "halo/halo_plan.h"

namespace distconv {
namespace {

struct Case {
  std::string name;
  Shape src_shape;
  Shape grid;
  ConvDesc desc;
  ConvolutionOptions options;
};

ConvDesc conv3x3(Index c, Index f, Index groups = 1) {
  ConvDesc d = ConvDesc::make(c, f, {3, 3});
  d.groups = groups;
  d.padding_lower = d.padding_upper = {1, 1};
  d.bias = ConvBias::kAdd;
  return d;
}

ConvolutionOptions scheme(ChannelParallelism s, int blocks = 0) {
  ConvolutionOptions o;
  o.channels = s;
  o.channel_blocks = blocks;
  return o;
}

std::vector<Case> cases() {
  ConvDesc strided = ConvDesc::make(4, 6, {3, 3});
  strided.stride = {2, 2};
  strided.padding_lower = {1, 0};
  strided.padding_upper = {0, 1};
  ConvDesc conv3d = ConvDesc::make(3, 5, {3, 3, 3});
  conv3d.padding_lower = conv3d.padding_upper = {1, 1, 1};
  return {
      {"samples", {4, 8, 16, 16}, {4, 1, 1, 1}, conv3x3(8, 8), {}},
      {"height_uneven", {1, 8, 13, 10}, {1, 1, 3, 1}, conv3x3(8, 4), {}},
      // 3 rows over 4 parts: one part is empty.
      {"height_empty", {1, 4, 3, 9}, {1, 1, 4, 1}, conv3x3(4, 4), {}},
      {"hybrid_2d", {2, 8, 11, 9}, {2, 1, 2, 2}, conv3x3(8, 8), {}},
      {"strided", {2, 4, 15, 12}, {1, 1, 2, 3}, strided, {}},
      {"grouped_whole_groups", {1, 8, 12, 12}, {1, 2, 2, 1},
       conv3x3(8, 8, 2), {}},
      {"stationary_output", {2, 8, 10, 10}, {1, 2, 2, 1}, conv3x3(8, 6),
       scheme(ChannelParallelism::kStationaryOutput)},
      {"stationary_input", {1, 6, 10, 10}, {1, 3, 2, 1}, conv3x3(6, 8),
       scheme(ChannelParallelism::kStationaryInput)},
      {"stationary_weights_uneven", {1, 10, 9, 7}, {1, 4, 2, 1},
       conv3x3(10, 7), scheme(ChannelParallelism::kStationaryWeights, 2)},
      {"stationary_weights_empty", {1, 6, 3, 8}, {1, 4, 4, 1}, conv3x3(6, 5),
       scheme(ChannelParallelism::kStationaryWeights, 2)},
      {"conv3d", {1, 3, 7, 6, 5}, {1, 1, 2, 1, 2}, conv3d, {}},
  };
}

ConvolutionOptions without_overlap(ConvolutionOptions o) {
  o.overlap = ConvOverlap::kNone;
  return o;
}

// Global FLOPs of the convolution's forward pass.
double global_flops(const Case& c) {
  const ConvDesc& d = c.desc;
  const Shape dst = d.dst_shape(c.src_shape);
  double cells = 1;
  for (int i = 2; i < dst.ndims(); ++i) cells *= double(dst[i]);
  return 2.0 * double(dst[0]) * cells * double(d.out_channels) *
         double(d.in_channels / d.groups) * double(d.kernel.volume());
}

double pieces_flops(const std::vector<ConvPiece>& pieces) {
  double f = 0;
  for (const ConvPiece& p : pieces) f += p.kernel ? p.kernel->flops() : 0;
  return f;
}

ConvolutionOptions in_place(ConvolutionOptions o) {
  o.input = ConvInput::kInPlace;
  return o;
}

// Whether `boxes` cover every cell of `b` (all boxes of one rank's buffer).
bool covered(const Box& b, const std::vector<Box>& boxes) {
  if (b.empty()) return true;
  // Cell by cell: the boxes here are small.
  Index inside = 0;
  Shape i = b.lower;
  const int n = b.ndims();
  for (Index k = 0; k < b.volume(); ++k) {
    Index r = k;
    for (int d = n - 1; d >= 0; --d) {
      i[d] = b.lower[d] + r % b.extent[d];
      r /= b.extent[d];
    }
    for (const Box& c : boxes) {
      if (c.contains(i)) {
        ++inside;
        break;
      }
    }
  }
  return inside == b.volume();
}

// In place: where channels are not split, the early pieces read the shard
// itself (their windows inside it), every backward-weights piece reads dy's
// shard, the frames hold what the late pieces read of the shard and what
// the exchanges send, and the backward-weights pieces share the outputs
// exactly; where channels are split, buffers are planned.
TEST(ConvPlan, InPlaceReadsTheShardAndFillsFrames) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    double weights = 0;
    for (int r = 0; r < src.num_parts(); ++r) {
      const ConvPlan p = plan_convolution(c.desc, src, r, in_place(c.options));
      if (p.channels.split) {
        EXPECT_EQ(p.input, ConvInput::kHaloBuffer);
        weights = -1;
        break;
      }
      ASSERT_EQ(p.input, ConvInput::kInPlace);
      const Box x_shard = p.x_buf.work(p.src_layout.shard(r));
      const Box dy_shard = p.dy_buf.work(p.dst_layout.shard(r));
      EXPECT_EQ(p.x_shard.box, x_shard);
      EXPECT_EQ(p.dy_shard.box, dy_shard);
      // Windows name every channel; a piece convolves its buffer's.
      const auto inside = [](Box window, const Box& shard) {
        window.lower[1] = shard.lower[1];
        window.extent[1] = shard.extent[1];
        return intersect(window, shard) == window;
      };
      for (const auto* early : {&p.forward_early, &p.weights_early}) {
        for (const ConvPiece& piece : *early) {
          EXPECT_TRUE(inside(piece.window.src, x_shard)) << piece.label;
        }
      }
      for (const ConvPiece& piece : p.data_early) {
        EXPECT_TRUE(inside(piece.window.dst, dy_shard)) << piece.label;
      }
      for (const auto* late : {&p.forward_late, &p.weights_late}) {
        for (const ConvPiece& piece : *late) {
          EXPECT_TRUE(covered(
              p.x_buf.local(intersect(piece.window.src, x_shard)), p.x_frame))
              << piece.label;
        }
      }
      for (const ConvPiece& piece : p.data_late) {
        EXPECT_TRUE(covered(
            p.dy_buf.local(intersect(piece.window.dst, dy_shard)), p.dy_frame))
            << piece.label;
      }
      for (const HaloMessage& m : make_halo_plan(p.src_layout, r).sends) {
        EXPECT_TRUE(covered(m.local, p.x_frame));
      }
      for (const HaloMessage& m : make_halo_plan(p.diff_dst_layout, r).sends) {
        EXPECT_TRUE(covered(m.local, p.dy_frame));
      }
      weights += pieces_flops(p.weights_early) + pieces_flops(p.weights_late);
    }
    if (weights >= 0) EXPECT_DOUBLE_EQ(weights, global_flops(c));
  }
}

TEST(ConvPlan, EveryRankAgreesOnTheLayouts) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    const ConvPlan first = plan_convolution(c.desc, src, 0, c.options);
    for (int r = 1; r < src.num_parts(); ++r) {
      const ConvPlan p = plan_convolution(c.desc, src, r, c.options);
      EXPECT_EQ(p.src_layout, first.src_layout);
      EXPECT_EQ(p.dst_layout, first.dst_layout);
      EXPECT_EQ(p.diff_dst_layout, first.diff_dst_layout);
      EXPECT_EQ(p.diff_src_layout, first.diff_src_layout);
      EXPECT_EQ(p.channels, first.channels);
    }
    EXPECT_EQ(first.dst.global_shape(), c.desc.dst_shape(c.src_shape));
    EXPECT_EQ(first.src_layout.distribution(), src);
  }
}

// Without overlap, each rank's forward, backward-data and backward-weights
// pieces do its share of the work once: over all ranks, the global FLOPs
// of each pass (every scheme convolves every (filter, channel) pair of
// every output cell exactly once).
TEST(ConvPlan, RanksShareEachPassExactly) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    double fwd = 0, data = 0, weights = 0;
    for (int r = 0; r < src.num_parts(); ++r) {
      const ConvPlan p =
          plan_convolution(c.desc, src, r, without_overlap(c.options));
      EXPECT_TRUE(p.forward_early.empty());
      EXPECT_TRUE(p.data_early.empty());
      fwd += pieces_flops(p.forward_late);
      data += pieces_flops(p.data_late);
      weights += pieces_flops(p.weights_early) + pieces_flops(p.weights_late);
    }
    EXPECT_DOUBLE_EQ(fwd, global_flops(c));
    EXPECT_DOUBLE_EQ(weights, global_flops(c));
    // Backward-data over the input gradient cells (counted per cell).
    const Shape& x = c.src_shape;
    const ConvDesc& d = c.desc;
    double strides = 1;
    for (int i = 0; i < d.stride.ndims(); ++i) strides *= d.stride[i];
    const double all_inputs = 2.0 * double(x.volume()) *
                              double(d.out_channels / d.groups) *
                              double(d.kernel.volume()) / strides;
    if (strides == 1) {
      EXPECT_DOUBLE_EQ(data, all_inputs);
    } else {  // inputs no window reads are zeroed, not convolved
      EXPECT_GT(data, 0.8 * all_inputs);
      EXPECT_LE(data, all_inputs);
    }
  }
}

// Backward-data's FLOPs are the forward's where the window shrinks the
// input (no padding; a kernel covering the whole input, a dense layer's),
// not its input cells times every tap.
TEST(ConvPlan, BackwardDataCountsTheWindowsTapsWhereItShrinksTheInput) {
  const ConvDesc dense = ConvDesc::make(64, 32, {4, 4, 4});
  const Shape x{4, 64, 4, 4, 4}, y{4, 32, 1, 1, 1};
  const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
  const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
  const double fwd =
      planned_call(dense, x, xs, y, ys, ConvPass::kForward).flops();
  EXPECT_DOUBLE_EQ(fwd, 2.0 * 4 * 32 * 64 * 64);
  EXPECT_DOUBLE_EQ(
      planned_call(dense, x, xs, y, ys, ConvPass::kBackwardData).flops(), fwd);
  const ConvDesc valid = ConvDesc::make(8, 16, {3, 3});
  const Shape v{2, 8, 12, 12}, w{2, 16, 10, 10};
  const Shape vs = dense_strides(v, StorageOrder::kChannelsLast);
  const Shape ws = dense_strides(w, StorageOrder::kChannelsLast);
  EXPECT_DOUBLE_EQ(
      planned_call(valid, v, vs, w, ws, ConvPass::kBackwardData).flops(),
      planned_call(valid, v, vs, w, ws, ConvPass::kForward).flops());
}

// With overlap, the early and late pieces of each pass cover this rank's
// cells of the pass (outputs forward, inputs backward-data), and every
// piece stays inside them.
TEST(ConvPlan, PiecesCoverTheShard) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    for (int r = 0; r < src.num_parts(); ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const ConvPlan p = plan_convolution(c.desc, src, r, c.options);
      auto check = [&](const Box& shard, std::vector<ConvPiece> early,
                       const std::vector<ConvPiece>& late) {
        early.insert(early.end(), late.begin(), late.end());
        std::vector<int> hits(static_cast<size_t>(shard.volume()), 0);
        for (const ConvPiece& piece : early) {
          ASSERT_TRUE(shard.contains(piece.box)) << piece.label;
          const Box local = piece.box.shifted(-shard.lower);
          for (Index i = 0; i < local.volume(); ++i) {
            const Shape at = unravel(i, local.extent) + local.lower;
            hits[static_cast<size_t>(linear_index(at, shard.extent))] = 1;
          }
        }
        for (int h : hits) ASSERT_EQ(h, 1);
      };
      check(p.y_buf.work(p.dst_layout.shard(r)), p.forward_early,
            p.forward_late);
      check(p.dx_buf.work(p.src_layout.shard(r)), p.data_early, p.data_late);
    }
  }
}

// The weight blocks of a channel group's members are disjoint and cover
// the weights; without a channel split every rank holds them all.
TEST(ConvPlan, WeightBlocksTileTheWeights) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    const Shape ws = c.desc.weights_shape();
    const Shape zero = Shape::filled(c.grid.ndims(), 0);
    std::vector<int> hits(static_cast<size_t>(ws.volume()), 0);
    for (Index m = 0; m < c.grid[1]; ++m) {
      Shape coord = zero;
      coord[1] = m;
      const ConvPlan p =
          plan_convolution(c.desc, src, src.part_index(coord), c.options);
      const Box& b = p.weights_block;
      for (Index i = 0; i < b.volume(); ++i) {
        const Shape at = unravel(i, b.extent) + b.lower;
        ++hits[static_cast<size_t>(linear_index(at, ws))];
      }
    }
    const ConvPlan p0 = plan_convolution(c.desc, src, 0, c.options);
    if (p0.channels.split) {
      for (int h : hits) ASSERT_EQ(h, 1);
    } else if (c.desc.groups == 1) {
      EXPECT_EQ(p0.weights_block.extent, ws);
    }
  }
}

TEST(ConvPlan, ChannelSchemesShapeTheGroup) {
  const Case weights = cases()[8];  // stationary_weights_uneven, P = 4
  const Distribution src(weights.src_shape, weights.grid);
  const ConvPlan p = plan_convolution(weights.desc, src, 3, weights.options);
  EXPECT_TRUE(p.channels.split);
  EXPECT_EQ(p.channels.pc, 2);
  EXPECT_EQ(p.channels.pf, 2);
  ASSERT_TRUE(p.x_full && p.dx_full && p.y_full && p.dy_full);
  EXPECT_EQ(p.x_full->members_dim, 1);
  EXPECT_EQ(p.y_full->members_dim, 0);
  EXPECT_GT(p.y_piece_size, 0);
  EXPECT_EQ(p.slice_shape, (Shape{1, 1, 2, 1}));

  const Case output = cases()[6];  // stationary_output, P = 2
  const ConvPlan o = plan_convolution(
      output.desc, Distribution(output.src_shape, output.grid), 1,
      output.options);
  EXPECT_EQ(o.channels.pc, 1);
  EXPECT_TRUE(o.x_full && !o.y_full);
  EXPECT_FALSE(o.sums_partial_outputs());
  // Every input channel of the own filters.
  EXPECT_EQ(o.weights_block.extent[1], output.desc.in_channels);

  const Case input = cases()[7];  // stationary_input, P = 3
  const ConvPlan i = plan_convolution(
      input.desc, Distribution(input.src_shape, input.grid), 2, input.options);
  EXPECT_EQ(i.channels.pf, 1);
  EXPECT_TRUE(!i.x_full && i.y_full);
  EXPECT_TRUE(i.sums_partial_outputs());
  EXPECT_EQ(i.weights_block.extent[0], input.desc.out_channels);
  ASSERT_TRUE(i.forward_late[0].kernel);
  EXPECT_EQ(i.forward_late[0].kernel->desc.bias, ConvBias::kNone);
}

TEST(ConvPlan, ComparesAndDescribes) {
  const Case c = cases()[8];
  const Distribution src(c.src_shape, c.grid);
  const ConvPlan a = plan_convolution(c.desc, src, 1, c.options);
  EXPECT_EQ(a, plan_convolution(c.desc, src, 1, c.options));
  EXPECT_NE(a, plan_convolution(c.desc, src, 2, c.options));
  EXPECT_NE(a, plan_convolution(c.desc, src, 1, without_overlap(c.options)));
  const std::string d = a.describe();
  EXPECT_EQ(d.rfind("channels: 2 channel block(s) x 2 filter block(s)", 0), 0u)
      << d;
  EXPECT_NE(d.find("forward core"), std::string::npos) << d;
  EXPECT_NE(d.find("backward-weights"), std::string::npos) << d;
}

TEST(ConvPlan, InflightTransportsKeepTheirHalosUnread) {
  // kMpiDatatypes writes halos while in flight: the early pieces must read
  // no halo cell, so they are the interior, not the core.
  const Case c = cases()[3];
  const Distribution src(c.src_shape, c.grid);
  ConvolutionOptions o = c.options;
  o.halo.transport = HaloTransport::kMpiDatatypes;
  const ConvPlan p = plan_convolution(c.desc, src, 0, o);
  const Box shard = p.x_buf.work(p.src_layout.shard(0));
  for (const ConvPiece& piece : p.forward_early) {
    EXPECT_TRUE(shard.contains(piece.window.src));
  }
}

TEST(ConvPlan, BadInputThrows) {
  const Case c = cases()[3];
  const Distribution src(c.src_shape, c.grid);
  EXPECT_THROW(plan_convolution(c.desc, src, src.num_parts(), c.options),
               Error);
  EXPECT_THROW(plan_convolution(c.desc, src, -1, c.options), Error);
  ConvDesc wrong = c.desc;
  wrong.in_channels = 3;
  EXPECT_THROW(plan_convolution(wrong, src, 0, c.options), Error);
  // A grouped convolution whose channel parts cut a group.
  const ConvDesc grouped = conv3x3(6, 6, 3);
  EXPECT_THROW(plan_convolution(grouped, Distribution({1, 6, 8, 8},
                                                      {1, 2, 1, 1}),
                                0),
               Error);
  ConvolutionOptions bad_blocks =
      scheme(ChannelParallelism::kStationaryWeights, 3);
  EXPECT_THROW(plan_convolution(conv3x3(8, 8),
                                Distribution({1, 8, 8, 8}, {1, 4, 1, 1}), 0,
                                bad_blocks),
               Error);
}

}  // namespace
}  // namespace distconv
