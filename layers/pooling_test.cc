// The distributed pooling against the reference kernels on the gathered
// global tensors, on every grid the rank count factors into (channels
// split too), reading from buffers with halos and in place; adjoint identities
// of the averages (through the reverse halo exchange); bad input.
#include "layers/pooling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/kernel_cache.h"
#include "kernels/reference/pool.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::grids_without_channel_split;
using testing::spatial_grid;
using testing::world_size;

struct PoolCase {
  std::string name;
  PoolDesc desc;
  Shape src_shape;
};

PoolDesc pool(PoolKind kind, Shape k, Shape s, Shape pl, Shape pu) {
  PoolDesc d = PoolDesc::make(kind, k);
  d.stride = s;
  d.padding_lower = pl;
  d.padding_upper = pu;
  return d;
}

PoolDesc circular(PoolDesc d, std::vector<PaddingMode> modes) {
  d.padding_mode = std::move(modes);
  return d;
}

// The support matrix: every case runs on every grid.
std::vector<PoolCase> cases() {
  const PoolKind kMax = PoolKind::kMax;
  const PoolKind kInc = PoolKind::kAverageIncludePadding;
  const PoolKind kExc = PoolKind::kAverageExcludePadding;
  const PaddingMode kC = PaddingMode::kCircular, kZ = PaddingMode::kZeros;
  return {
      {"max_3x3_stride2_circular_with_ties",
       circular(pool(kMax, {3, 3}, {2, 2}, {1, 1}, {1, 1}), {kC, kC}),
       {1, 2, 12, 9}},
      {"avg_exclude_circular_h_lopsided",
       circular(pool(kExc, {3, 2}, {1, 2}, {2, 0}, {1, 1}), {kC, kZ}),
       {1, 2, 9, 10}},
      // Halos as wide as the input: one rank wraps onto itself, several
      // ranks reach past their neighbours.
      {"max_circular_padding_as_wide_as_the_input",
       circular(pool(kMax, {3, 3}, {1, 1}, {2, 2}, {2, 1}), {kC, kC}),
       {1, 1, 2, 5}},
      {"avg3d_include_circular_d_w",
       circular(pool(kInc, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
                {kC, kZ, kC}),
       {1, 2, 5, 6, 7}},
      {"max_2x2_stride2_odd_extents",
       pool(kMax, {2, 2}, {2, 2}, {0, 0}, {0, 0}),
       {2, 3, 11, 10}},
      {"max_3x3_stride2_same_with_ties",
       pool(kMax, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
       {1, 2, 12, 9}},
      {"avg_include_3x3_stride1_same",
       pool(kInc, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
       {2, 2, 9, 8}},
      {"avg_exclude_3x3_stride2_asymmetric_padding",
       pool(kExc, {3, 3}, {2, 2}, {1, 0}, {0, 2}),
       {1, 3, 10, 11}},
      {"avg_exclude_2x3_stride1x2",
       pool(kExc, {2, 3}, {1, 2}, {0, 1}, {1, 1}),
       {1, 2, 9, 10}},
      {"max_1x1_stride3_windows_not_at_shard_edges",
       pool(kMax, {1, 1}, {3, 3}, {0, 0}, {0, 0}),
       {2, 2, 10, 11}},
      {"avg_include_kernel_smaller_than_stride",
       pool(kInc, {2, 2}, {3, 3}, {1, 0}, {0, 1}),
       {1, 2, 11, 10}},
      {"max3d_2x2x2_stride2",
       pool(kMax, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}),
       {1, 2, 7, 6, 8}},
      {"avg3d_include_3x3x3_same",
       pool(kInc, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
       {2, 2, 6, 5, 7}},
      {"avg3d_exclude_lopsided",
       pool(kExc, {3, 1, 2}, {2, 1, 1}, {1, 0, 1}, {1, 0, 0}),
       {1, 2, 7, 8, 6}},
  };
}

// Inputs with few distinct values, so max pooling meets ties.
template <typename T>
std::vector<T> tied_values(Index n, unsigned seed) {
  std::vector<T> v = random_vector<T>(n, seed);
  for (T& x : v) x = std::round(x * 2);
  return v;
}

// Garbage in a buffer the pass writes (or, frames, scratch) must not
// survive into the results.
template <typename T>
void fill_garbage(DistTensor<T>& t) {
  t.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
}

// Forward and backward on `grid`, twice (plans are reusable), reading the
// input from a buffer with halos or in place (shards and frames); the
// gathered results must match the reference.
template <typename T>
void ExpectMatchesReference(
    const PoolCase& c, const ProcessGrid& grid, double tol,
    ConvInput input = ConvInput::kHaloBuffer,
    ConvImplSearch search = ConvImplSearch::kHeuristic) {
  const Shape dst_shape = c.desc.dst_shape(c.src_shape);
  const auto x = tied_values<T>(c.src_shape.volume(), 1);
  const auto dy = random_vector<T>(dst_shape.volume(), 2);
  PoolingOptions options;
  options.input = input;
  options.search = search;
  Pooling<T> p(grid, c.desc, Distribution(c.src_shape, grid.shape()), options);
  SCOPED_TRACE(p.describe());
  const bool in_place = input == ConvInput::kInPlace;
  const HaloLayout& x_layout = in_place ? p.shard_layout() : p.src_layout();
  DistTensor<T> xt(grid, x_layout), yt(grid, p.dst_layout());
  DistTensor<T> dyt(grid, p.diff_dst_layout()), dxt(grid, x_layout);
  DistTensor<T> x_frame(grid, p.src_layout()), dx_frame(grid, p.src_layout());
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  for (DistTensor<T>* t : {&yt, &dxt, &x_frame, &dx_frame}) fill_garbage(*t);
  for (int repeat = 0; repeat < 2; ++repeat) {
    if (in_place) {
      p.forward(xt, x_frame, yt);
      fill_garbage(dx_frame);
      p.backward(xt, x_frame, dyt, dxt, dx_frame);
    } else {
      p.forward(xt, yt);
      p.backward(xt, dyt, dxt);
    }
  }
  std::vector<T> y(dst_shape.volume()), dx(c.src_shape.volume());
  gather(yt, y.data(), 0);
  gather(dxt, dx.data(), 0);
  if (grid.rank() != 0) return;
  std::vector<T> y_ref(y.size()), dx_ref(dx.size());
  reference::pool_fwd<T>(c.desc, c.src_shape, x.data(), dst_shape,
                         y_ref.data());
  reference::pool_bwd<T>(c.desc, c.src_shape, x.data(), dst_shape, dy.data(),
                         dx_ref.data());
  EXPECT_LE(max_relative_error(y, y_ref), tol) << "forward";
  EXPECT_LE(max_relative_error(dx, dx_ref), tol) << "backward";
}

template <typename T>
void ForEveryCaseAndGrid(double tol, ConvInput input) {
  for (const PoolCase& c : cases()) {
    // Every grid, channel splits included: channels pool independently.
    for (const Shape& shape :
         testing::factorizations(world_size(), c.src_shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      SCOPED_TRACE(c.name + " on grid " + shape.to_string());
      ExpectMatchesReference<T>(c, grid, tol, input);
      if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure()) !=
          0) {
        return;
      }
    }
  }
}

TEST(Pooling, DoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>(1e-12, ConvInput::kHaloBuffer);
}

TEST(Pooling, FloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>(1e-5, ConvInput::kHaloBuffer);
}

// In place: the interior reads (and writes) the shards, the boundary
// pieces the frames; windows overlapping across pieces add up.
TEST(Pooling, InPlaceDoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>(1e-12, ConvInput::kInPlace);
}

TEST(Pooling, InPlaceFloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>(1e-5, ConvInput::kInPlace);
}

// Measured: each rank times its kernels' candidates (the wall clock), the
// ranks agree, the results are the reference's, read from buffers and in
// place.
TEST(Pooling, MeasuredChoiceMatchesTheReference) {
  ProcessGrid grid(MPI_COMM_WORLD, testing::squarest_hw_grid());
  for (const PoolCase& c : cases()) {
    if (c.src_shape.ndims() != 4) continue;
    SCOPED_TRACE(c.name);
    for (ConvInput input : {ConvInput::kHaloBuffer, ConvInput::kInPlace}) {
      ExpectMatchesReference<float>(c, grid, 1e-5, input,
                                    ConvImplSearch::kMeasured);
    }
  }
}

// Ranks whose (stand-in) timings differ run, for the same problem, the
// fastest any rank found: rank 0 finds slabs faster, the others one call,
// faster still.
TEST(Pooling, MeasuredChoiceIsTheFastestAnyRankFound) {
  const int size = world_size(), rank = testing::world_rank();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, size, 1});
  const Shape src{1, 4, 4 * size, 8};  // the same problem on every rank
  PoolingOptions o;
  o.search = ConvImplSearch::kMeasured;
  o.timing.timer = [rank](PoolImpl impl, const std::function<void()>& run) {
    run();
    if (rank == 0) return impl == PoolImpl::kSlabs ? 1.0f : 2.0f;
    return impl == PoolImpl::kOneCall ? 0.5f : 3.0f;
  };
  Pooling<float> p(grid, PoolDesc::make(PoolKind::kMax, {2, 2}),
                   Distribution(src, grid.shape()), o);
  const PoolImpl want = size == 1 ? PoolImpl::kSlabs : PoolImpl::kOneCall;
  ASSERT_TRUE(p.plan().kernel.has_value());
  EXPECT_EQ(p.plan().kernel->impl, want);
  EXPECT_NE(p.describe().find(std::string(to_string(want)) + ": "),
            std::string::npos)
      << p.describe();
}

// A cache of choices (kernels/kernel_cache.h): the first layer times and
// puts what the ranks agreed on into it; a second layer of the same
// shapes, and one from the cache's file, take it without timing.
TEST(Pooling, MeasuredChoiceReusesTheCache) {
  const int size = world_size(), rank = testing::world_rank();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, size, 1});
  const Distribution src(Shape{1, 4, 4 * size, 8}, grid.shape());
  const PoolDesc desc = PoolDesc::make(PoolKind::kMax, {2, 2});
  int timed = 0;
  PoolingOptions o;
  o.search = ConvImplSearch::kMeasured;
  o.timing.cache = std::make_shared<KernelCache>();
  o.timing.timer = [&timed](PoolImpl impl, const std::function<void()>& run) {
    run();
    ++timed;
    return impl == PoolImpl::kOneCall ? 1.0f : 2.0f;
  };
  Pooling<float> first(grid, desc, src, o);
  const int after_first = timed;
  EXPECT_GT(after_first, 0);
  ASSERT_EQ(o.timing.cache->size(), 1u);
  const auto& [problem, choice] = *o.timing.cache->pool_entries().begin();
  EXPECT_EQ(choice.impl, PoolImpl::kOneCall);
  EXPECT_EQ(o.timing.cache->misses(), 1u);
  Pooling<float> second(grid, desc, src, o);
  EXPECT_EQ(timed, after_first);
  EXPECT_EQ(o.timing.cache->hits(), 1u);
  EXPECT_EQ(second.plan().kernel->impl, PoolImpl::kOneCall);
  // Through a file: a fresh cache read from it times nothing either; a
  // file whose entry names another implementation is obeyed (the choice
  // comes from the file, not a new timing).
  const std::string path =
      testing::temp_path("pool_choices.cache." + std::to_string(rank));
  KernelCache edited;
  edited.put(problem, PoolChoice{PoolImpl::kSlabs, 0.5f});
  edited.save(path);
  o.timing.cache = std::make_shared<KernelCache>();
  EXPECT_EQ(o.timing.cache->load(path), "");
  Pooling<float> third(grid, desc, src, o);
  EXPECT_EQ(timed, after_first);
  EXPECT_EQ(third.plan().kernel->impl, PoolImpl::kSlabs);
  std::remove(path.c_str());
}

// Many small partitions: a 10x10 image over the squarest spatial grid of
// all ranks, so that shards are 2 or 3 cells wide or empty.
TEST(Pooling, ManySmallPartitions) {
  ProcessGrid grid(MPI_COMM_WORLD, testing::squarest_hw_grid());
  for (const PoolCase& c : cases()) {
    if (c.src_shape.ndims() != 4) continue;
    PoolCase small = c;
    small.src_shape[2] = small.src_shape[3] = 10;
    SCOPED_TRACE(c.name + " 10x10 on grid " + grid.shape().to_string());
    for (ConvInput input : {ConvInput::kHaloBuffer, ConvInput::kInPlace}) {
      ExpectMatchesReference<double>(small, grid, 1e-12, input);
      ExpectMatchesReference<float>(small, grid, 1e-5, input);
    }
  }
}

// <pool(x), y> == <x, pool_bwd(y)> for the averages, distributed, in
// double, reading from buffers with halos and in place: the backward's
// halo contributions travel home by the reverse halo exchange, the adjoint
// of the forward one.
TEST(Pooling, AverageBackwardIsTheAdjointOfForward) {
  for (const PoolCase& c : cases()) {
    if (c.desc.kind == PoolKind::kMax) continue;
    ProcessGrid grid(MPI_COMM_WORLD, spatial_grid(c.src_shape.ndims()));
    SCOPED_TRACE(c.name + " on grid " + grid.shape().to_string());
    const Shape dst_shape = c.desc.dst_shape(c.src_shape);
    const auto x = random_vector<double>(c.src_shape.volume(), 5);
    const auto y = random_vector<double>(dst_shape.volume(), 6);
    for (ConvInput input : {ConvInput::kHaloBuffer, ConvInput::kInPlace}) {
      PoolingOptions options;
      options.input = input;
      Pooling<double> p(grid, c.desc, Distribution(c.src_shape, grid.shape()),
                        options);
      const bool in_place = input == ConvInput::kInPlace;
      const HaloLayout& x_layout = in_place ? p.shard_layout() : p.src_layout();
      DistTensor<double> xt(grid, x_layout), px(grid, p.dst_layout());
      DistTensor<double> yt(grid, p.diff_dst_layout()), pty(grid, x_layout);
      DistTensor<double> x_frame(grid, p.src_layout()),
          y_frame(grid, p.src_layout());
      scatter(x.data(), xt, 0);
      scatter(y.data(), yt, 0);
      if (in_place) {
        p.forward(xt, x_frame, px);
        p.backward(xt, x_frame, yt, pty, y_frame);
      } else {
        p.forward(xt, px);
        p.backward(xt, yt, pty);
      }
      const double lhs = testing::global_dot(px, yt);
      const double rhs = testing::global_dot(xt, pty);
      EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, std::abs(lhs)))
          << (in_place ? "in place" : "halo buffer");
    }
  }
}

TEST(Pooling, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  const PoolDesc max2 = PoolDesc::make(PoolKind::kMax, {2, 2});
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "spans", [&] {
        Pooling<float>(grid, PoolDesc::make(PoolKind::kMax, {9, 2}),
                       Distribution(Shape{1, 4, 4, 8}, grid.shape()));
      });
  PoolingOptions both;
  both.impl = PoolImpl::kSlabs;
  both.search = ConvImplSearch::kMeasured;
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "ask for one of them", [&] {
        Pooling<float>(grid, max2,
                       Distribution(Shape{1, 4, 4, 8}, grid.shape()), both);
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "smaller than the kernel", [&] {
        Pooling<float>(grid,
                       pool(PoolKind::kMax, {2, 2}, {1, 1}, {2, 0}, {0, 0}),
                       Distribution(Shape{1, 4, 8 * n, 8}, grid.shape()));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Pooling<float>(grid, max2,
                       Distribution(Shape{1, 4, 8, 8}, Shape{1, 1, 1, n + 1}));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "must be >= 0", [&] {
        Pooling<float>(grid, max2,
                       Distribution(Shape{-1, 4, 8, 8}, grid.shape()));
      });
  Pooling<float> p(grid, max2,
                   Distribution(Shape{1, 4, 8 * n, 8}, grid.shape()));
  DistTensor<float> x(grid, p.src_layout()), y(grid, p.dst_layout());
  DistTensor<float> dx(grid, p.diff_src_layout());
  testing::expect_error_on_all_ranks(comm, ErrorKind::kState,
                                     "needs a forward first",
                                     [&] { p.backward(x, y, dx); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "dst tensor's layout",
                                     [&] { p.forward(x, x); });
  p.forward(x, y);  // still usable
  p.backward(x, y, dx);
  testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                     "frames only when planned",
                                     [&] { p.forward(x, dx, y); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kState, "not planned",
                                     [&] { p.shard_layout(); });
  PoolingOptions in_place;
  in_place.input = ConvInput::kInPlace;
  Pooling<float> q(grid, max2,
                   Distribution(Shape{1, 4, 8 * n, 8}, grid.shape()), in_place);
  DistTensor<float> xs(grid, q.shard_layout()), frame(grid, q.src_layout());
  testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                     "pass the shards and their frames",
                                     [&] { q.forward(x, y); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "src_frame tensor's layout",
                                     [&] { q.forward(xs, y, y); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kState, "needs a forward first",
      [&] { q.backward(xs, frame, y, xs, frame); });
  q.forward(xs, frame, y);  // still usable
  q.backward(xs, frame, y, xs, frame);
}

}  // namespace
}  // namespace distconv
