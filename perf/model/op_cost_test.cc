#include "perf/model/op_cost.h"

#include <gtest/gtest.h>

#include "distconv/error.h"
#include "perf/model/model_testing.h"

namespace distconv {
namespace model {
namespace {

// 2 * N * H * W * F * C * 9 FLOPs at 1 GFLOP/s plus 1 us per call.
double pass_s(double n, double h, double w, double c, double f) {
  return 1e-6 + 2 * n * h * w * c * f * 9 / 1e9;
}

TEST(OpCost, OneRankConvolutionIsComputeOnly) {
  const Shape x{1, 16, 32, 32};
  const Op op = Op::convolution(same3x3(16, 16), x);
  const Cost c = op_cost(op, Distribution(x, {1, 1, 1, 1}), test_machine());
  EXPECT_NEAR(c.compute_s, 3 * pass_s(1, 32, 32, 16, 16), 1e-12);
  EXPECT_EQ(c.halo_s, 0);
  EXPECT_EQ(c.allreduce_s, 0);
  EXPECT_EQ(c.halo_messages, 0);
}

TEST(OpCost, SpatialSplitReceivesOneRowPerExchange) {
  const Shape x{1, 16, 32, 32};
  const Op op = Op::convolution(same3x3(16, 16), x);
  const Distribution d(x, {1, 1, 2, 1});
  const Cost c = op_cost(op, d, test_machine());
  // The plan's pieces: forward and backward-data each as a core of 15
  // rows while halos travel and a boundary row after, backward-weights
  // whole: the three passes' FLOPs in five calls.
  EXPECT_NEAR(c.compute_s, 3 * pass_s(1, 16, 32, 16, 16) + 2e-6, 1e-12);
  // Forward: one input row; backward-data: one output-gradient row; each
  // 32 x 16 floats.
  EXPECT_EQ(c.halo_messages, 2);
  EXPECT_EQ(c.halo_bytes, 2 * 32 * 16 * 4);
  // Both hide behind the interior (15 of 16 rows), the allreduce behind
  // backward-data.
  EXPECT_EQ(c.halo_s, 0);
  EXPECT_EQ(c.allreduce_s, 0);

  // On a slow link the exchange shows: what the interior cannot hide.
  Machine slow = test_machine();
  slow.intra.bandwidth_Bps = 1e3;
  const Cost s = op_cost(op, d, slow);
  const double exchange = 1e-6 + 2048 / 1e3;
  const double hidden = pass_s(1, 15, 32, 16, 16);  // the core piece
  EXPECT_NEAR(s.halo_s, 2 * (exchange - hidden), 1e-9);
  EXPECT_GT(s.allreduce_s, 0);  // 9216 bytes at 1 kB/s
}

TEST(OpCost, SampleSplitNeedsNoHalo) {
  const Shape x{2, 16, 32, 32};
  const Op op = Op::convolution(same3x3(16, 16), x);
  const Cost c = op_cost(op, Distribution(x, {2, 1, 1, 1}), test_machine());
  EXPECT_NEAR(c.compute_s, 3 * pass_s(1, 32, 32, 16, 16), 1e-12);
  EXPECT_EQ(c.halo_messages, 0);
}

TEST(OpCost, InterNodeHalosUseTheSlowLink) {
  const Shape x{1, 16, 32, 32};
  const Op op = Op::convolution(same3x3(16, 16), x);
  const Distribution d(x, {1, 1, 2, 1});
  Machine one_per_node = test_machine(/*ranks_per_node=*/1);
  one_per_node.inter.bandwidth_Bps = 1e3;
  Machine two_per_node = test_machine(/*ranks_per_node=*/2);
  two_per_node.inter.bandwidth_Bps = 1e3;
  EXPECT_GT(op_cost(op, d, one_per_node).halo_s, 1.0);
  EXPECT_EQ(op_cost(op, d, two_per_node).halo_s, 0);
}

TEST(OpCost, PoolingAndElementwise) {
  const Shape x{1, 16, 32, 32};
  const Distribution d(x, {1, 1, 2, 1});
  const Machine m = test_machine();
  // 2x2 windows on an even split: no halo; two calls over 16 x 32 x 16.
  const Cost p = op_cost(Op::pooling(PoolDesc::make(PoolKind::kMax, {2, 2}), x),
                         d, m);
  EXPECT_EQ(p.halo_messages, 0);
  EXPECT_NEAR(p.compute_s, 2e-6 + 16 * 32 * 16 * 1e-9, 1e-15);
  const Cost r = op_cost(Op::elementwise(OpKind::kRelu, x), d, m);
  EXPECT_NEAR(r.compute_s, 2e-6 + 16 * 32 * 16 * 1e-9, 1e-15);
  EXPECT_EQ(r.allreduce_s, 0);
  // Batch norm: three small allreduces over the 2 ranks.
  const Cost b = op_cost(Op::elementwise(OpKind::kBatchNorm, x), d, m);
  EXPECT_NEAR(b.allreduce_s,
              2 * allreduce_time(16 * 8, 2, m) + allreduce_time(32 * 8, 2, m),
              1e-15);
  // Split over channels instead: the same shard size, the same allreduces
  // of every channel's sums.
  const Cost bc = op_cost(Op::elementwise(OpKind::kBatchNorm, x),
                          Distribution(x, {1, 2, 1, 1}), m);
  EXPECT_NEAR(bc.compute_s, b.compute_s, 1e-15);
  EXPECT_NEAR(bc.allreduce_s, b.allreduce_s, 1e-15);
}

TEST(OpCost, ScientificLayers) {
  const Shape x{2, 16, 32, 32};
  const Distribution d(x, {1, 1, 2, 1});
  const Machine m = test_machine();
  // Group norm: two passes of 2 calls over the shard; allreduces of 2
  // samples x 4 groups (twice forward, doubled backward) over the 2 ranks
  // sharing the samples, and of 2 x 16 parameter gradients over both.
  const Cost g = op_cost(Op::group_norm(4, x), d, m);
  EXPECT_NEAR(g.compute_s, 2e-6 + 2 * 16 * 32 * 16 * 1e-9, 1e-15);
  EXPECT_NEAR(g.allreduce_s,
              2 * allreduce_time(8 * 8, 2, m) + allreduce_time(16 * 8, 2, m) +
                  allreduce_time(32 * 8, 2, m),
              1e-15);
  // Split over samples instead: no set to reduce over, only the
  // parameter gradients.
  const Cost gs = op_cost(Op::group_norm(4, x), Distribution(x, {2, 1, 1, 1}),
                          m);
  EXPECT_NEAR(gs.allreduce_s, allreduce_time(32 * 8, 2, m), 1e-15);
  // Global average pooling: one output per (sample, channel) reduced
  // forward and backward.
  const Cost a = op_cost(
      Op::adaptive_pooling({AdaptivePoolKind::kAverage, Shape{1, 1}}, x), d,
      m);
  EXPECT_NEAR(a.allreduce_s, 2 * allreduce_time(2 * 16 * 8, 2, m), 1e-15);
  // Doubling the size: each rank's outputs read one row of the other's
  // input, both ways.
  const Op up =
      Op::interpolation(InterpolateDesc::of_size(Shape{64, 64}), x);
  EXPECT_EQ(up.dst_shape(), (Shape{2, 16, 64, 64}));
  const Cost u = op_cost(up, d, m);
  EXPECT_EQ(u.halo_messages, 2);
  EXPECT_EQ(u.halo_bytes, 2 * 2 * 32 * 16 * 4);
  EXPECT_NEAR(u.compute_s, 2e-6 + 2 * 32 * 64 * 16 * 1e-9, 1e-15);
  const Cost r = op_cost(Op::elementwise(OpKind::kDropout, x), d, m);
  EXPECT_NEAR(r.compute_s, 2e-6 + 2 * 16 * 32 * 16 * 1e-9, 1e-15);
}

TEST(OpCost, TransposedConvolutionExchangesThreeTimesWhenHalosOverlap) {
  const Shape x{1, 8, 16, 16};
  DeconvDesc up = DeconvDesc::make(8, 4, {4, 4});
  up.stride = {2, 2};
  up.padding_lower = up.padding_upper = {1, 1};
  const Op op = Op::deconvolution(up, x);
  EXPECT_EQ(op.dst_shape(), (Shape{1, 4, 32, 32}));
  const Cost c = op_cost(op, Distribution(x, {1, 1, 2, 1}), test_machine());
  EXPECT_GT(c.halo_messages, 0);
  EXPECT_EQ(static_cast<long>(c.halo_messages) % 3, 0);
  EXPECT_GT(c.compute_s, 0);
}

// Channel splits are costed from the convolution's plan: each scheme's
// work divided over the channel group, plus its collectives.
TEST(OpCost, ChannelSplitConvolutionsCostTheirCollectives) {
  const Shape x{1, 16, 32, 32};
  const Distribution d(x, {1, 2, 1, 1});
  const Machine m = test_machine();
  const double cells = 32 * 32;
  // Stationary output: each rank computes 8 of the 16 filters from all 16
  // channels (halves of every pass); x gathered and dx summed: two ring
  // steps, each moving half of a 16-channel tensor, and copies of the
  // whole tensor twice and the own 8 channels once (1 ns each).
  ConvolutionOptions o;
  const Cost out = op_cost(Op::convolution(same3x3(16, 16), x, o), d, m);
  EXPECT_NEAR(out.compute_s, 3 * pass_s(1, 32, 32, 16, 8), 1e-12);
  EXPECT_NEAR(out.channel_s,
              2 * (1e-6 + 8 * cells * 4 / 1e9 + (2 * 16 + 8) * cells * 1e-9),
              1e-12);
  EXPECT_EQ(out.halo_messages, 0);
  // Stationary input: partial outputs of all 16 filters from 8 channels;
  // y summed and dy gathered.
  o.channels = ChannelParallelism::kStationaryInput;
  const Cost in = op_cost(Op::convolution(same3x3(16, 16), x, o), d, m);
  EXPECT_NEAR(in.compute_s, 3 * pass_s(1, 32, 32, 8, 16), 1e-12);
  EXPECT_NEAR(in.channel_s, out.channel_s, 1e-12);
  // The weight gradients are whole blocks on one rank each: nothing to
  // allreduce.
  EXPECT_EQ(out.allreduce_s, 0);
  EXPECT_EQ(in.allreduce_s, 0);
  // Stationary weights over 4 ranks as 2 x 2: all four collectives and
  // the swapped pieces.
  o.channels = ChannelParallelism::kStationaryWeights;
  const Cost w = op_cost(Op::convolution(same3x3(16, 16), x, o),
                         Distribution(x, {1, 4, 1, 1}), m);
  EXPECT_NEAR(w.compute_s, 3 * pass_s(1, 32, 32, 8, 8), 1e-12);
  EXPECT_GT(w.channel_s, out.channel_s);
}

TEST(OpCost, RefusesChannelSplitsOfOtherOpsAndWrongShapes) {
  const Shape x{1, 16, 32, 32};
  const Op op = Op::convolution(same3x3(16, 16), x);
  try {
    op_cost(Op::elementwise(OpKind::kConcat, x),
            Distribution(x, {1, 2, 1, 1}), test_machine());
    FAIL() << "a channel split of concat was modelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
  try {
    op_cost(op, Distribution(Shape{1, 16, 30, 32}, {1, 1, 1, 1}),
            test_machine());
    FAIL() << "a wrong input shape was modelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  }
}

TEST(OpCost, RedistributionMovesWhatIsNotKept) {
  const Shape x{2, 4, 8, 8};
  const Distribution samples(x, {2, 1, 1, 1}), rows(x, {1, 1, 2, 1});
  EXPECT_EQ(redistribution_cost(samples, samples, test_machine()).total(), 0);
  // Rank 0 holds sample 0 (256 cells) and wants rows 0-3 of both: keeps
  // 128, sends 128 to rank 1 and receives 128 from it.
  const Cost c = redistribution_cost(samples, rows, test_machine());
  EXPECT_NEAR(c.redistribute_s, 1e-6 + 512e-9 + 384e-9, 1e-15);
  const Cost far =
      redistribution_cost(samples, rows, test_machine(/*ranks_per_node=*/1));
  EXPECT_NEAR(far.redistribute_s, 10e-6 + 512 / 0.1e9 + 384e-9, 1e-15);
}

TEST(OpCost, AllreduceTakesTheCheaperAlgorithm) {
  const Machine m = test_machine();
  EXPECT_EQ(allreduce_time(1e6, 1, m), 0);
  // 4 ranks, 1 MB: ring 6 us + 1.5 ms beats doubling 2 us + 2 ms.
  EXPECT_NEAR(allreduce_time(1e6, 4, m), 6e-6 + 1.5e-3, 1e-12);
  // 8 bytes: doubling's 3 latencies beat the ring's 14.
  EXPECT_NEAR(allreduce_time(8, 8, m), 3 * (1e-6 + 8e-9), 1e-15);
}

TEST(OpCost, RepresentativePartsCoverEdgesMiddleAndSecond) {
  const Distribution d(Shape{1, 1, 64, 8}, {1, 1, 8, 2});
  // H coordinates {0, 1, 3, 4, 7} x W {0, 1}.
  EXPECT_EQ(representative_parts(d).size(), 10u);
  EXPECT_EQ(representative_parts(Distribution(Shape{1, 1, 4, 4},
                                              {1, 1, 1, 1})),
            std::vector<int>{0});
}

}  // namespace
}  // namespace model
}  // namespace distconv
