// DeconvPlan without MPI: properties over every rank of several grids
// (sample and spatial splits, uneven and empty shards, groups, 3D), a grid
// splitting channels (refused), comparison, description and bad input.
#include "layers/deconv_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distconv/error.h"
#include "tests/plan_testing.h"

namespace distconv {
namespace {

struct Case {
  std::string name;
  Shape src_shape;
  Shape grid;
  DeconvDesc desc;
};

DeconvDesc up(Index c, Index f, const Shape& kernel, Index stride, Index pad) {
  DeconvDesc d = DeconvDesc::make(c, f, kernel);
  d.stride = Shape::filled(kernel.ndims(), stride);
  d.padding_lower = d.padding_upper = Shape::filled(kernel.ndims(), pad);
  d.bias = ConvBias::kAdd;
  return d;
}

std::vector<Case> cases() {
  DeconvDesc grouped = up(4, 6, {3, 3}, 2, 1);
  grouped.groups = 2;
  grouped.output_padding = {1, 0};
  return {
      {"samples", {4, 3, 5, 5}, {4, 1, 1, 1}, up(3, 2, {2, 2}, 2, 0)},
      {"height_uneven", {1, 4, 7, 6}, {1, 1, 3, 1}, up(4, 3, {4, 4}, 2, 1)},
      // 2 input rows over 3 parts: one part is empty.
      {"height_empty", {1, 2, 2, 5}, {1, 1, 3, 1}, up(2, 2, {3, 3}, 1, 1)},
      {"grouped_hybrid", {2, 4, 6, 7}, {2, 1, 2, 2}, grouped},
      {"conv3d", {1, 2, 4, 3, 5}, {1, 1, 2, 1, 2}, up(2, 3, {2, 2, 2}, 2, 0)},
  };
}

TEST(DeconvPlan, EveryRankAgreesOnTheLayouts) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    testing::expect_ranks_agree_on_layouts(
        src, c.desc.dst_shape(c.src_shape),
        [&](int r) { return plan_deconvolution(c.desc, src, r); });
  }
}

// Each rank's window is its input shard; the kernels read and write inside
// its buffers; over all ranks the passes do the global work once.
TEST(DeconvPlan, RanksShareEachPassExactly) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    const DeconvDesc& d = c.desc;
    double forward = 0, data = 0, weights = 0;
    for (int r = 0; r < src.num_parts(); ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const DeconvPlan p = plan_deconvolution(d, src, r);
      const WindowPlan& w = p.window;
      if (src.shard(r).empty()) {
        EXPECT_FALSE(p.forward_kernel || p.data_kernel || p.weights_kernel);
        EXPECT_TRUE(w.zero_first);
        continue;
      }
      EXPECT_EQ(w.window.dst, src.shard(r));
      ASSERT_TRUE(p.forward_kernel && p.data_kernel && p.weights_kernel);
      EXPECT_TRUE(p.dst_layout().buffer_box(r).contains(w.window.src));
      EXPECT_EQ(p.forward_kernel->pass, ConvPass::kBackwardData);
      EXPECT_EQ(p.data_kernel->pass, ConvPass::kForward);
      EXPECT_EQ(p.weights_kernel->pass, ConvPass::kBackwardWeights);
      EXPECT_EQ(p.data_kernel->src_extent, w.window.src.extent);
      EXPECT_EQ(p.data_kernel->dst_strides, p.src_layout().local_strides(r));
      forward += p.forward_kernel->flops();
      data += p.data_kernel->flops();
      weights += p.weights_kernel->flops();
    }
    // Each input cell meets every tap of every (in, out / groups) pair.
    const double all = 2.0 * double(c.src_shape.volume()) *
                       double(d.out_channels / d.groups) *
                       double(d.kernel.volume());
    EXPECT_DOUBLE_EQ(data, all);
    EXPECT_DOUBLE_EQ(weights, all);
    EXPECT_GT(forward, 0);
  }
}

// Every output cell some input reaches lies in some rank's window: with
// the kernel at least the stride and no output padding, all of them.
TEST(DeconvPlan, WindowsCoverTheOutput) {
  for (const Case& c : cases()) {
    const Shape& op = c.desc.output_padding;
    if (op != Shape::filled(op.ndims(), 0)) continue;
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    const Shape dst = c.desc.dst_shape(c.src_shape);
    std::vector<int> hits(static_cast<size_t>(dst.volume()), 0);
    for (int r = 0; r < src.num_parts(); ++r) {
      const Box b = plan_deconvolution(c.desc, src, r).window.window.src;
      for (Index i = 0; i < b.volume(); ++i) {
        const Shape at = unravel(i, b.extent) + b.lower;
        hits[static_cast<size_t>(linear_index(at, dst))] = 1;
      }
    }
    for (int h : hits) ASSERT_EQ(h, 1);
  }
}

// In place: the pieces and plain_rest tile the rank's input cells once;
// each piece's kernels read the shard (interior) or the frame (boundary),
// and forward writes the shard or a dense scratch; the interior window
// lies in the output shard.
TEST(DeconvPlan, InPlacePiecesAndRestTileTheInput) {
  DeconvolutionOptions o;
  o.input = ConvInput::kInPlace;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    for (int r = 0; r < src.num_parts(); ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const DeconvPlan p = plan_deconvolution(c.desc, src, r, o);
      ASSERT_TRUE(p.frames.has_value());
      const WindowFrames& f = *p.frames;
      ASSERT_EQ(f.pieces.size(), p.piece_kernels.size());
      const Box y_shard = f.shard.shard(r);
      const Shape x_origin = p.src_layout().buffer_box(r).lower;
      std::vector<Box> tiles;
      for (size_t i = 0; i < f.pieces.size(); ++i) {
        const WindowPiece& piece = f.pieces[i];
        tiles.push_back(piece.window.dst);
        const DeconvPieceKernels& k = p.piece_kernels[i];
        const Shape read =
            (piece.reads_frame ? p.dst_layout() : f.shard).local_strides(r);
        EXPECT_EQ(k.data.src_strides, read);
        EXPECT_EQ(k.weights.src_strides, read);
        EXPECT_EQ(k.forward.src_strides,
                  piece.reads_frame ? dense_strides(piece.window.src.extent,
                                                    StorageOrder::kChannelsLast)
                                    : f.shard.local_strides(r));
        if (!piece.reads_frame) {
          EXPECT_TRUE(y_shard.contains(piece.window.src));
        }
      }
      for (const Box& b : f.plain_rest) tiles.push_back(b.shifted(x_origin));
      Index cells = 0;
      for (size_t i = 0; i < tiles.size(); ++i) {
        EXPECT_TRUE(p.window.window.dst.contains(tiles[i])) << tiles[i];
        cells += tiles[i].volume();
        for (size_t j = 0; j < i; ++j) {
          EXPECT_TRUE(intersect(tiles[i], tiles[j]).empty());
        }
      }
      EXPECT_EQ(cells, p.window.window.dst.volume());
    }
  }
}

TEST(DeconvPlan, ComparesAndDescribes) {
  const Case c = cases()[1];
  const Distribution src(c.src_shape, c.grid);
  const DeconvPlan a = plan_deconvolution(c.desc, src, 1);
  EXPECT_EQ(a, plan_deconvolution(c.desc, src, 1));
  EXPECT_NE(a, plan_deconvolution(c.desc, src, 2));
  const std::string d = a.describe();
  EXPECT_EQ(d.rfind("transposed convolution [", 0), 0u) << d;
  EXPECT_NE(d.find("backward-weights"), std::string::npos) << d;
  const Case e = cases()[2];
  const DeconvPlan empty =
      plan_deconvolution(e.desc, Distribution(e.src_shape, e.grid), 2);
  EXPECT_NE(empty.describe().find("no kernel"), std::string::npos);
}

TEST(DeconvPlan, BadInputThrows) {
  const Case c = cases()[1];
  const Distribution src(c.src_shape, c.grid);
  EXPECT_THROW(plan_deconvolution(c.desc, src, src.num_parts()), Error);
  EXPECT_THROW(plan_deconvolution(c.desc, src, -1), Error);
  DeconvDesc wrong = c.desc;
  wrong.in_channels = 3;
  EXPECT_THROW(plan_deconvolution(wrong, src, 0), Error);
  DeconvolutionOptions narrow;
  narrow.haloed_layout = HaloLayout(Distribution(
      c.desc.dst_shape(c.src_shape), c.grid));  // no halos: too narrow
  EXPECT_THROW(plan_deconvolution(c.desc, src, 0, narrow), Error);
  // Channels split over the grid: not supported.
  try {
    plan_deconvolution(c.desc, Distribution(c.src_shape, {1, 2, 1, 1}), 0);
    FAIL() << "a channel split was planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
}

}  // namespace
}  // namespace distconv
