// PoolPlan without MPI: properties over every rank of several grids
// (sample, spatial and channel splits, uneven and empty shards, 3D),
// comparison, description and bad input.
#include "layers/pool_plan.h"

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
  PoolDesc desc;
};

PoolDesc pool(PoolKind kind, const Shape& kernel, Index stride, Index pad) {
  PoolDesc d = PoolDesc::make(kind, kernel);
  d.stride = Shape::filled(kernel.ndims(), stride);
  d.padding_lower = d.padding_upper = Shape::filled(kernel.ndims(), pad);
  return d;
}

std::vector<Case> cases() {
  return {
      {"samples",
       {4, 3, 8, 8},
       {4, 1, 1, 1},
       PoolDesc::make(PoolKind::kMax, {2, 2})},
      {"height_uneven_overlapping",
       {1, 2, 13, 10},
       {1, 1, 3, 1},
       pool(PoolKind::kMax, {3, 3}, 2, 1)},
      // 4 output rows over 5 parts: one part has no outputs.
      {"height_empty",
       {1, 2, 8, 6},
       {1, 1, 5, 1},
       pool(PoolKind::kAverageExcludePadding, {2, 2}, 2, 0)},
      {"channels_and_width",
       {2, 6, 9, 11},
       {1, 3, 1, 2},
       pool(PoolKind::kAverageIncludePadding, {3, 3}, 1, 1)},
      {"hybrid_3d",
       {2, 2, 7, 6, 5},
       {2, 1, 2, 1, 2},
       pool(PoolKind::kMax, {3, 3, 3}, 2, 1)},
  };
}

TEST(PoolPlan, EveryRankAgreesOnTheLayouts) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    testing::expect_ranks_agree_on_layouts(
        src, c.desc.dst_shape(c.src_shape),
        [&](int r) { return plan_pooling(c.desc, src, r); });
    const PoolPlan first = plan_pooling(c.desc, src, 0);
    // Channels pool independently: no halo across channels.
    for (int r = 0; r < src.num_parts(); ++r) {
      EXPECT_EQ(first.src_layout().buffer_box(r).extent[1],
                src.shard(r).extent[1]);
    }
  }
}

// The windows' outputs are the output shards, which tile the output; each
// window reads inside its rank's buffer (shard and halos), and its extents
// fit: (src + padding - kernel) / stride + 1 == dst in every spatial
// dimension.
TEST(PoolPlan, WindowsTileTheOutputAndReadTheBuffer) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    Index outputs = 0;
    int without_kernel = 0;
    for (int r = 0; r < src.num_parts(); ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const PoolPlan p = plan_pooling(c.desc, src, r);
      const ConvWindow& w = p.window.window;
      const Box shard = p.dst_layout().shard(r);
      if (shard.empty()) {
        EXPECT_TRUE(w.dst.empty());
      } else {
        EXPECT_EQ(w.dst, shard);
      }
      outputs += w.dst.volume();
      if (!p.kernel) {
        ++without_kernel;
        EXPECT_TRUE(w.dst.empty());
        EXPECT_TRUE(p.window.zero_first);
        continue;
      }
      EXPECT_TRUE(p.src_layout().buffer_box(r).contains(w.src));
      const PoolKernelCall& k = *p.kernel;
      EXPECT_EQ(k.src_extent, w.src.extent);
      EXPECT_EQ(k.dst_extent, w.dst.extent);
      EXPECT_EQ(k.src_strides, p.src_layout().local_strides(r));
      for (int d = 0; d < c.desc.spatial_dims(); ++d) {
        const Index padded = k.src_extent[d + 2] + k.desc.padding_lower[d] +
                             k.desc.padding_upper[d];
        EXPECT_EQ((padded - c.desc.kernel[d]) / c.desc.stride[d] + 1,
                  k.dst_extent[d + 2]);
        // Padding only where the window meets the tensor's edge.
        if (w.src.lower[d + 2] > 0) EXPECT_EQ(k.desc.padding_lower[d], 0);
      }
      EXPECT_EQ(p.window.zero_first, w.src != p.src_layout().buffer_box(r));
    }
    EXPECT_EQ(outputs, c.desc.dst_shape(c.src_shape).volume());
    if (c.name == "height_empty") EXPECT_EQ(without_kernel, 1);
  }
}

// In place: the pieces tile the rank's outputs; the interior reads inside
// the shard, the boundary pieces inside the frame; the frame's edges are
// disjoint shard cells covering what the boundary pieces read of the shard
// and what the exchange sends; the shard's rest is what the interior
// window leaves out.
TEST(PoolPlan, InPlacePiecesTileTheOutputAndFramesCoverTheEdges) {
  PoolingOptions o;
  o.input = ConvInput::kInPlace;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.src_shape, c.grid);
    for (int r = 0; r < src.num_parts(); ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const PoolPlan p = plan_pooling(c.desc, src, r, o);
      ASSERT_TRUE(p.in_place());
      ASSERT_TRUE(p.frames.has_value());
      EXPECT_FALSE(plan_pooling(c.desc, src, r).frames.has_value());
      const WindowFrames& f = *p.frames;
      ASSERT_EQ(f.pieces.size(), p.piece_kernels.size());
      const Box shard = src.shard(r);
      const Shape frame_origin = p.src_layout().buffer_box(r).lower;
      Index outputs = 0, interior = 0, boundary_reads = 0;
      for (size_t i = 0; i < f.pieces.size(); ++i) {
        const WindowPiece& piece = f.pieces[i];
        outputs += piece.window.dst.volume();
        EXPECT_TRUE(p.window.window.dst.contains(piece.window.dst));
        EXPECT_EQ(p.piece_kernels[i].src_extent, piece.window.src.extent);
        if (!piece.reads_frame) {
          ++interior;
          EXPECT_EQ(i, 0u) << "the interior runs first";
          EXPECT_TRUE(shard.contains(piece.window.src));
          EXPECT_EQ(piece.in_local, piece.window.src.shifted(-shard.lower));
        } else {
          EXPECT_EQ(piece.in_local, piece.window.src.shifted(-frame_origin));
          boundary_reads += intersect(piece.window.src, shard).volume();
        }
      }
      EXPECT_LE(interior, 1);
      EXPECT_EQ(outputs, p.window.window.dst.volume());
      // Edges: disjoint, inside the shard.
      Index edge_cells = 0;
      for (size_t i = 0; i < f.frame_edges.size(); ++i) {
        const Box global = f.frame_edges[i].shifted(frame_origin);
        EXPECT_TRUE(shard.contains(global)) << global;
        edge_cells += global.volume();
        for (size_t j = 0; j < i; ++j) {
          EXPECT_TRUE(intersect(f.frame_edges[i], f.frame_edges[j]).empty());
        }
      }
      if (boundary_reads > 0) EXPECT_GT(edge_cells, 0);
      Index rest = 0;
      for (const Box& b : f.shard_rest) rest += b.volume();
      const Index interior_reads =
          interior ? f.pieces[0].window.src.volume() : 0;
      EXPECT_EQ(rest + interior_reads, shard.volume());
    }
  }
}

TEST(PoolPlan, SharedLayoutsAreKept) {
  const Case c = cases()[1];
  const Distribution src(c.src_shape, c.grid);
  const PoolPlan own = plan_pooling(c.desc, src, 1);
  PoolingOptions o;
  o.haloed_layout =  // wider than needed
      HaloLayout(src, HaloWidths::symmetric({0, 0, 2, 2}))
          .with_storage(StorageOrder::kChannelsLast);
  const PoolPlan shared = plan_pooling(c.desc, src, 1, o);
  EXPECT_EQ(shared.src_layout(), *o.haloed_layout);
  EXPECT_EQ(shared.window.window, own.window.window);
  EXPECT_NE(shared, own);
  EXPECT_TRUE(shared.window.zero_first);  // halos past the window
}

TEST(PoolPlan, ComparesAndDescribes) {
  const Case c = cases()[2];
  const Distribution src(c.src_shape, c.grid);
  const PoolPlan a = plan_pooling(c.desc, src, 1);
  EXPECT_EQ(a, plan_pooling(c.desc, src, 1));
  EXPECT_NE(a, plan_pooling(c.desc, src, 2));
  const std::string d = a.describe();
  EXPECT_EQ(d.rfind("average (padding excluded) pooling [", 0), 0u) << d;
  EXPECT_NE(d.find(" -> "), std::string::npos) << d;
  const PoolPlan empty = plan_pooling(c.desc, src, 4);
  EXPECT_NE(empty.describe().find("no outputs"), std::string::npos);
}

// The kernels run the heuristic's implementation unless the options name
// one, in place too; a plan asking for another differs.
TEST(PoolPlan, KernelsRunTheImplementationAsked) {
  const Case c = cases()[2];  // average pooling: one call by the heuristic
  const Distribution src(c.src_shape, c.grid);
  const PoolPlan heuristic = plan_pooling(c.desc, src, 1);
  ASSERT_TRUE(heuristic.kernel.has_value());
  EXPECT_EQ(heuristic.kernel->impl, heuristic_pool_impl(c.desc));
  EXPECT_EQ(heuristic.kernel->impl, PoolImpl::kOneCall);
  EXPECT_FALSE(heuristic.impl.has_value());
  PoolingOptions o;
  o.impl = PoolImpl::kSlabs;
  o.input = ConvInput::kInPlace;
  const PoolPlan slabs = plan_pooling(c.desc, src, 1, o);
  EXPECT_EQ(slabs.kernel->impl, PoolImpl::kSlabs);
  ASSERT_FALSE(slabs.piece_kernels.empty());
  for (const PoolKernelCall& k : slabs.piece_kernels) {
    EXPECT_EQ(k.impl, PoolImpl::kSlabs);
  }
  o.impl.reset();
  EXPECT_NE(slabs, plan_pooling(c.desc, src, 1, o));
}

TEST(PoolPlan, BadInputThrows) {
  const Case c = cases()[1];
  const Distribution src(c.src_shape, c.grid);
  EXPECT_THROW(plan_pooling(c.desc, src, src.num_parts()), Error);
  EXPECT_THROW(plan_pooling(c.desc, src, -1), Error);
  PoolDesc wide = c.desc;
  wide.padding_lower = {3, 3};  // not smaller than the kernel
  EXPECT_THROW(plan_pooling(wide, src, 0), Error);
  PoolingOptions narrow;
  narrow.haloed_layout = HaloLayout(src);  // no halos: too narrow
  EXPECT_THROW(plan_pooling(c.desc, src, 0, narrow), Error);
}

}  // namespace
}  // namespace distconv
