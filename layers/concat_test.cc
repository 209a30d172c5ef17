// Distributed concatenation and slicing along channels against the
// reference on the gathered global tensors, on every grid that keeps
// channels whole; tensors with halos; adjoint identities; bad input.
#include "layers/concat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "tests/shard_testing.h"
#include "kernels/reference/concat.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::gathered;
using testing::grids_without_channel_split;
using testing::world_size;

Shape with_c(Shape s, Index c) {
  s[1] = c;
  return s;
}

struct ConcatCase {
  std::string name;
  Shape shape;                  // C is ignored
  std::vector<Index> channels;  // of each input
};

std::vector<ConcatCase> concat_cases() {
  return {
      {"2d_three_inputs", {2, 0, 5, 7}, {3, 1, 4}},
      {"3d_two_inputs", {1, 0, 3, 5, 2}, {2, 3}},
      {"2d_an_input_without_channels", {1, 0, 4, 3}, {2, 0, 1}},
  };
}

// Where the tensors live: the plan's plain layouts, or layouts with halos
// (width 1, the inputs' gradients channels-first) whose halo cells must
// keep their sentinel.
enum class Layouts { kPlain, kWithHalos };

HaloLayout layout_for(const HaloLayout& plain, Layouts layouts,
                      StorageOrder order) {
  return layouts == Layouts::kPlain
             ? plain
             : testing::with_halos(plain.distribution(), 1, order);
}

template <typename T>
void ExpectConcatMatches(const ProcessGrid& grid, const ConcatCase& c,
                         Layouts layouts) {
  SCOPED_TRACE(std::string(sizeof(T) == 8 ? "double" : "float") +
               (layouts == Layouts::kPlain ? "" : " with halos"));
  const T sentinel = T(-99);
  const int k = static_cast<int>(c.channels.size());
  std::vector<Distribution> dists;
  for (Index ch : c.channels) {
    dists.emplace_back(with_c(c.shape, ch), grid.shape());
  }
  const Concat<T> cat(grid, dists);
  const Shape dst_shape = cat.dst_distribution().global_shape();
  std::vector<std::vector<T>> xs;
  std::vector<std::unique_ptr<DistTensor<T>>> xt, dxt;
  for (int i = 0; i < k; ++i) {
    xs.push_back(random_vector<T>(dists[i].global_shape().volume(), 10 + i));
    xt.push_back(std::make_unique<DistTensor<T>>(
        grid, layout_for(cat.src_layout(i), layouts,
                            StorageOrder::kChannelsLast)));
    dxt.push_back(std::make_unique<DistTensor<T>>(
        grid, layout_for(cat.src_layout(i), layouts,
                            StorageOrder::kChannelsFirst)));
    testing::fill_buffer(*dxt.back(), sentinel);
    scatter(xs.back().data(), *xt.back(), 0);
  }
  const auto dy = random_vector<T>(dst_shape.volume(), 3);
  DistTensor<T> yt(grid, layout_for(cat.dst_layout(), layouts,
                                       StorageOrder::kChannelsLast));
  DistTensor<T> dyt(grid, yt.layout());
  testing::fill_buffer(yt, sentinel);
  scatter(dy.data(), dyt, 0);
  std::vector<const DistTensor<T>*> srcs;
  std::vector<DistTensor<T>*> diff_srcs;
  for (int i = 0; i < k; ++i) {
    srcs.push_back(xt[i].get());
    diff_srcs.push_back(dxt[i].get());
  }
  cat.forward(srcs, yt);
  cat.backward(dyt, diff_srcs);
  const std::vector<T> y = gathered(yt);
  bool halos_kept = testing::halos_hold(yt, sentinel);
  std::vector<std::vector<T>> dx;
  for (int i = 0; i < k; ++i) {
    dx.push_back(gathered(*dxt[i]));
    halos_kept = halos_kept && testing::halos_hold(*dxt[i], sentinel);
  }
  EXPECT_TRUE(halos_kept);
  if (grid.rank() != 0) return;
  std::vector<Shape> shapes;
  std::vector<const T*> ptrs;
  for (int i = 0; i < k; ++i) {
    shapes.push_back(dists[i].global_shape());
    ptrs.push_back(xs[i].data());
  }
  std::vector<T> y_ref(dst_shape.volume());
  reference::concat_channels<T>(shapes, ptrs, y_ref.data());
  EXPECT_EQ(max_relative_error(y, y_ref), 0) << "forward";
  for (int i = 0; i < k; ++i) {
    const ChannelRange r = cat.channels(i);
    std::vector<T> dx_ref(shapes[i].volume());
    reference::slice_channels<T>(dst_shape, r.begin, r.end, dy.data(),
                                 dx_ref.data());
    EXPECT_EQ(max_relative_error(dx[i], dx_ref), 0) << "backward, input " << i;
  }
}

TEST(Concat, MatchesTheReferenceOnEveryGrid) {
  for (const ConcatCase& c : concat_cases()) {
    for (const Shape& g : grids_without_channel_split(c.shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, g);
      SCOPED_TRACE(c.name + " on grid " + g.to_string());
      for (Layouts layouts : {Layouts::kPlain, Layouts::kWithHalos}) {
        ExpectConcatMatches<double>(grid, c, layouts);
        ExpectConcatMatches<float>(grid, c, layouts);
      }
      if (testing::max_over(MPI_COMM_WORLD,
                            ::testing::Test::HasFailure()) != 0) {
        return;
      }
    }
  }
}

struct SliceCase {
  std::string name;
  Shape shape;
  ChannelRange range;
};

std::vector<SliceCase> slice_cases() {
  return {
      {"2d_middle", {2, 6, 5, 7}, {1, 4}},
      {"2d_all", {1, 3, 4, 3}, {0, 3}},
      {"2d_empty", {1, 3, 4, 3}, {2, 2}},
      {"3d_last_channels", {1, 5, 3, 5, 2}, {2, 5}},
  };
}

template <typename T>
void ExpectSliceMatches(const ProcessGrid& grid, const SliceCase& c,
                        Layouts layouts) {
  SCOPED_TRACE(std::string(sizeof(T) == 8 ? "double" : "float") +
               (layouts == Layouts::kPlain ? "" : " with halos"));
  const T sentinel = T(-99);
  const Slice<T> slice(grid, c.range, Distribution(c.shape, grid.shape()));
  const Shape dst_shape = slice.dst_distribution().global_shape();
  const auto x = random_vector<T>(c.shape.volume(), 1);
  const auto keep = random_vector<T>(c.shape.volume(), 2);
  const auto dy = random_vector<T>(dst_shape.volume(), 3);
  const HaloLayout src_layout = layout_for(
      slice.src_layout(), layouts, StorageOrder::kChannelsLast);
  const HaloLayout dst_layout = layout_for(
      slice.dst_layout(), layouts, StorageOrder::kChannelsFirst);
  DistTensor<T> xt(grid, src_layout), yt(grid, dst_layout);
  DistTensor<T> dyt(grid, dst_layout), dxt(grid, src_layout),
      kept(grid, src_layout);
  for (DistTensor<T>* t : {&yt, &dxt, &kept}) testing::fill_buffer(*t, sentinel);
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  scatter(keep.data(), kept, 0);
  slice.forward(xt, yt);
  slice.backward(dyt, dxt);  // OtherChannels::kZero
  slice.backward(dyt, kept, OtherChannels::kKeep);
  const std::vector<T> y = gathered(yt), dx = gathered(dxt),
                       dx_kept = gathered(kept);
  bool halos_kept = true;
  for (DistTensor<T>* t : {&yt, &dxt, &kept}) {
    halos_kept = halos_kept && testing::halos_hold(*t, sentinel);
  }
  EXPECT_TRUE(halos_kept);
  if (grid.rank() != 0) return;
  std::vector<T> y_ref(dst_shape.volume()), dx_ref(x.size());
  reference::slice_channels<T>(c.shape, c.range.begin, c.range.end, x.data(),
                               y_ref.data());
  reference::unslice_channels<T>(c.shape, c.range.begin, c.range.end,
                                 dy.data(), dx_ref.data());
  EXPECT_EQ(max_relative_error(y, y_ref), 0) << "forward";
  EXPECT_EQ(max_relative_error(dx, dx_ref), 0) << "backward";
  // kKeep: the range as kZero writes it, the other channels as they were.
  std::vector<T> kept_ref = dx_ref;
  for (size_t i = 0; i < kept_ref.size(); ++i) {
    const Index ch = unravel(static_cast<Index>(i), c.shape)[1];
    if (ch < c.range.begin || ch >= c.range.end) kept_ref[i] = keep[i];
  }
  EXPECT_EQ(max_relative_error(dx_kept, kept_ref), 0) << "backward, kKeep";
}

TEST(Slice, MatchesTheReferenceOnEveryGrid) {
  for (const SliceCase& c : slice_cases()) {
    for (const Shape& g : grids_without_channel_split(c.shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, g);
      SCOPED_TRACE(c.name + " on grid " + g.to_string());
      for (Layouts layouts : {Layouts::kPlain, Layouts::kWithHalos}) {
        ExpectSliceMatches<double>(grid, c, layouts);
        ExpectSliceMatches<float>(grid, c, layouts);
      }
      if (testing::max_over(MPI_COMM_WORLD,
                            ::testing::Test::HasFailure()) != 0) {
        return;
      }
    }
  }
}

// <concat(x0, x1), y> == <x0, bwd(y)_0> + <x1, bwd(y)_1>, and
// <slice(x), y> == <x, slice_bwd(y)>, distributed, in double.
TEST(Concat, BackwardIsTheAdjointOfForward) {
  for (const Shape& shape : {Shape{2, 0, 6, 5}, Shape{1, 0, 4, 3, 5}}) {
    ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(shape.ndims()));
    SCOPED_TRACE(shape.to_string() + " on grid " + grid.shape().to_string());
    const Distribution d0(with_c(shape, 2), grid.shape());
    const Distribution d1(with_c(shape, 3), grid.shape());
    const Concat<double> cat(grid, {d0, d1});
    DistTensor<double> x0(grid, cat.src_layout(0)), x1(grid, cat.src_layout(1));
    DistTensor<double> y(grid, cat.dst_layout()), cx(grid, cat.dst_layout());
    DistTensor<double> b0(grid, cat.src_layout(0)), b1(grid, cat.src_layout(1));
    scatter(random_vector<double>(d0.global_shape().volume(), 5).data(), x0,
            0);
    scatter(random_vector<double>(d1.global_shape().volume(), 6).data(), x1,
            0);
    scatter(random_vector<double>(
                cat.dst_distribution().global_shape().volume(), 7)
                .data(),
            y, 0);
    cat.forward({&x0, &x1}, cx);
    cat.backward(y, {&b0, &b1});
    const double lhs = testing::global_dot(cx, y);
    const double rhs = testing::global_dot(x0, b0) + testing::global_dot(x1, b1);
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, std::abs(lhs))) << "concat";

    const Slice<double> slice(grid, {1, 4}, cat.dst_distribution());
    DistTensor<double> sy(grid, slice.dst_layout()), z(grid, slice.dst_layout());
    DistTensor<double> tz(grid, slice.src_layout());
    scatter(random_vector<double>(
                slice.dst_distribution().global_shape().volume(), 8)
                .data(),
            z, 0);
    slice.forward(y, sy);
    slice.backward(z, tz);
    const double slhs = testing::global_dot(sy, z);
    const double srhs = testing::global_dot(y, tz);
    EXPECT_NEAR(slhs, srhs, 1e-12 * std::max(1.0, std::abs(slhs)))
        << "slice";
  }
}

TEST(Concat, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  const Distribution a(Shape{1, 2, 2 * n, 3}, grid.shape());
  const Distribution b(Shape{1, 3, 2 * n, 3}, grid.shape());
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "at least one input",
      [&] { Concat<float>(grid, std::vector<Distribution>{}); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "is not split like input 0", [&] {
        Concat<float>(grid,
                      {a, Distribution(Shape{1, 3, 2 * n, 4}, grid.shape())});
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Concat<float>(grid, {a, Distribution(Shape{1, 3, 2 * n, 3},
                                             Shape{1, 1, 1, n + 1})});
      });
  if (n > 1) {
    ProcessGrid channels(comm, Shape{1, n, 1, 1});
    const Distribution split(Shape{1, 2 * n, 4, 4}, channels.shape());
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kUnsupported, "splits channels",
        [&] { Concat<float>(channels, {split, split}); });
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kUnsupported, "splits channels",
        [&] { Slice<float>(channels, {0, 1}, split); });
  }
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "outside the input's channels",
      [&] { Slice<float>(grid, {1, 3}, a); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "outside the input's channels",
      [&] { Slice<float>(grid, {2, 1}, a); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "outside the input's channels",
      [&] { Slice<float>(grid, {-1, 1}, a); });

  const Concat<float> cat(grid, {a, b});
  DistTensor<float> at(grid, cat.src_layout(0)), bt(grid, cat.src_layout(1));
  DistTensor<float> y(grid, cat.dst_layout());
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "planned for 2 inputs",
      [&] { cat.forward({&at}, y); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "concat: input 1's distribution",
      [&] { cat.forward({&at, &at}, y); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "concat: dst's distribution",
      [&] { cat.forward({&at, &bt}, bt); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch,
      "concat: input gradient 0's distribution",
      [&] { cat.backward(y, {&bt, &bt}); });
  const Slice<float> slice(grid, {0, 2}, b);
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "slice: src's distribution",
      [&] { slice.forward(y, at); });
  cat.forward({&at, &bt}, y);  // still usable
  slice.forward(bt, at);
}

}  // namespace
}  // namespace distconv
