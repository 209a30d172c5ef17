// The distributed linear interpolation against the serial loops on the
// gathered tensors, on every grid the rank count factors into (channel
// splits included), 1D, 2D and 3D, up and down, aligned corners either
// way, uneven and empty shards: forward, backward, and backward as the
// adjoint of forward (halos and their reverse exchange included), with
// buffers with halos and in place (shards and frames); bf16 and fp16
// against fp32 in both modes;
// bad input.
#include "layers/interpolate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/reference/interpolate.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;

struct Case {
  std::string name;
  Shape src;
  InterpolateDesc desc;
};

InterpolateDesc sized(Shape size, AlignCorners a = AlignCorners::kNo) {
  InterpolateDesc d = InterpolateDesc::of_size(size);
  d.align_corners = a;
  return d;
}

std::vector<Case> cases() {
  InterpolateDesc scaled = sized({15, 8});
  scaled.scales = {1.0 / 3.0, 0.5};
  return {
      {"bilinear_x2", {2, 3, 5, 4}, sized({10, 8})},
      {"bilinear_aligned", {1, 2, 6, 5}, sized({11, 7}, AlignCorners::kYes)},
      {"bilinear_scale_factors", {1, 2, 5, 4}, scaled},
      {"bilinear_down", {2, 2, 9, 7}, sized({4, 3})},
      {"from_one_cell", {2, 3, 1, 1}, sized({6, 5})},
      {"trilinear", {1, 2, 3, 4, 2}, sized({6, 8, 5})},
      {"linear_1d", {3, 2, 7}, sized({12}, AlignCorners::kYes)},
  };
}

// The reference loops on the global tensors.
std::vector<double> serial_forward(const Case& c,
                                   const std::vector<double>& x) {
  std::vector<double> y(c.desc.dst_shape(c.src).volume());
  reference::interpolate_fwd(c.desc, c.src, x.data(), y.data());
  return y;
}

std::vector<double> serial_backward(const Case& c,
                                    const std::vector<double>& dy) {
  std::vector<double> dx(c.src.volume());
  reference::interpolate_bwd(c.desc, c.src, dy.data(), dx.data());
  return dx;
}

std::vector<Shape> every_grid(int ndims) {
  std::vector<Shape> grids = testing::grids_without_channel_split(ndims);
  for (const Shape& g : testing::grids_with_channel_split(ndims))
    grids.push_back(g);
  return grids;
}

const char* mode_name(ConvInput input) {
  return input == ConvInput::kInPlace ? "in place" : "buffer with halos";
}

// Calls fn(grid, options) on every grid of `ndims` dimensions in both
// modes, under a trace naming case, grid and mode; stops, returning false,
// after the first call on which a rank failed.
template <typename Fn>
bool for_each_grid_and_mode(const std::string& name, int ndims, Fn fn) {
  for (const Shape& g : every_grid(ndims)) {
    for (ConvInput input : {ConvInput::kHaloBuffer, ConvInput::kInPlace}) {
      SCOPED_TRACE(name + " on grid " + g.to_string() + ", " +
                   mode_name(input));
      ProcessGrid grid(MPI_COMM_WORLD, g);
      InterpolateOptions options;
      options.input = input;
      fn(grid, options);
      if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure())) {
        return false;
      }
    }
  }
  return true;
}

// Both passes of `layer` in its mode: x's and dx's tensors (shards in
// place, buffers with halos otherwise), frames and outputs filled with
// garbage first.
template <typename T>
struct Passes {
  Passes(const ProcessGrid& grid, const Interpolate<T>& layer)
      : in_place(layer.plan().in_place()),
        xs(grid, in_place ? layer.shard_layout() : layer.src_layout()),
        dxs(grid, xs.layout()),
        x_frame(grid, layer.src_layout()),
        dx_frame(grid, layer.src_layout()),
        ys(grid, layer.dst_layout()),
        dys(grid, layer.diff_dst_layout()) {
    for (DistTensor<T>* t : {&xs, &dxs, &x_frame, &dx_frame, &ys}) {
      t->buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
    }
  }
  // x and dy scattered from rank 0, both passes, y and dx gathered there.
  void run(Interpolate<T>& layer, const std::vector<T>& x,
           const std::vector<T>& dy, std::vector<T>& y, std::vector<T>& dx) {
    scatter(x.data(), xs, 0);
    scatter(dy.data(), dys, 0);
    if (in_place) {
      layer.forward(xs, x_frame, ys);
      layer.backward(dys, dxs, dx_frame);
    } else {
      layer.forward(xs, ys);
      layer.backward(dys, dxs);
    }
    y.assign(dy.size(), T(0));
    dx.assign(x.size(), T(0));
    gather(ys, y.data(), 0);
    gather(dxs, dx.data(), 0);
  }
  bool in_place;
  DistTensor<T> xs, dxs, x_frame, dx_frame, ys, dys;
};

TEST(Interpolate, MatchesTheSerialLoopsOnEveryGrid) {
  for (const Case& c : cases()) {
    const Shape out = c.desc.dst_shape(c.src);
    const auto x = random_vector<double>(c.src.volume(), 1);
    const auto dy = random_vector<double>(out.volume(), 2);
    const auto y_ref = serial_forward(c, x);
    const auto dx_ref = serial_backward(c, dy);
    const bool passed = for_each_grid_and_mode(
        c.name, c.src.ndims(),
        [&](const ProcessGrid& grid, const InterpolateOptions& options) {
          Interpolate<double> layer(grid, c.desc,
                                    Distribution(c.src, grid.shape()), options);
          Passes io(grid, layer);
          std::vector<double> y, dx;
          io.run(layer, x, dy, y, dx);
          if (grid.rank() == 0) {
            EXPECT_LE(max_relative_error(y, y_ref), 1e-14) << "forward";
            EXPECT_LE(max_relative_error(dx, dx_ref), 1e-13) << "backward";
          }
          // <A x, z> == <x, A^T z> over the distributed tensors.
          const double lhs = testing::sum_over(MPI_COMM_WORLD, [&] {
            double s = 0;
            io.ys.interior().for_each([&](const Shape& i, double& v) {
              s += v * std::as_const(io.dys).interior()(i);
            });
            return s;
          }());
          const double rhs = testing::sum_over(MPI_COMM_WORLD, [&] {
            double s = 0;
            io.xs.interior().for_each([&](const Shape& i, double& v) {
              s += v * std::as_const(io.dxs).interior()(i);
            });
            return s;
          }());
          EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, std::abs(lhs)));
        });
    if (!passed) return;
  }
}

// In place on many small partitions: most ranks' shards are a cell or
// empty, so every output reads the frame or none does.
TEST(Interpolate, InPlaceOnManySmallShards) {
  const int p = testing::world_size();
  for (const Case& c :
       std::vector<Case>{{"up_over_few_rows", {1, 2, 2, 3}, sized({9, 7})},
                         {"down_to_few_rows", {1, 1, 9, 2}, sized({2, 3})}}) {
    const Shape out = c.desc.dst_shape(c.src);
    const auto x = random_vector<double>(c.src.volume(), 4);
    const auto dy = random_vector<double>(out.volume(), 5);
    for (const Shape& g : {Shape{1, 1, p, 1}, Shape{1, 1, 1, p}}) {
      SCOPED_TRACE(c.name + " on grid " + g.to_string());
      ProcessGrid grid(MPI_COMM_WORLD, g);
      InterpolateOptions options;
      options.input = ConvInput::kInPlace;
      Interpolate<double> layer(grid, c.desc, Distribution(c.src, g), options);
      Passes io(grid, layer);
      std::vector<double> y, dx;
      io.run(layer, x, dy, y, dx);
      if (grid.rank() == 0) {
        EXPECT_LE(max_relative_error(y, serial_forward(c, x)), 1e-14);
        EXPECT_LE(max_relative_error(dx, serial_backward(c, dy)), 1e-13);
      }
    }
  }
}

// The in-place plan of every part: the pieces tile the output shard, the
// interior holds most of it and its taps stay in the shard, the boundary
// taps in the frame.
TEST(InterpolatePlan, InPlacePiecesTileTheOutputShard) {
  const InterpolateDesc desc = sized({32, 30});
  const Distribution src(Shape{1, 2, 16, 15}, Shape{1, 1, 2, 3});
  for (int r = 0; r < src.num_parts(); ++r) {
    SCOPED_TRACE("part " + std::to_string(r));
    const InterpolatePlan p =
        plan_interpolate(desc, src, r, ConvInput::kInPlace);
    ASSERT_TRUE(p.frames.has_value());
    const Box out = p.dst_layout.shard(r);
    const Box in = p.frames->shard.shard(r);
    const Box buffer = p.src_layout.buffer_box(r);
    Index covered = 0, interior = 0;
    const auto& pieces = p.frames->pieces;
    for (size_t i = 0; i < pieces.size(); ++i) {
      covered += pieces[i].out_local.volume();
      if (!pieces[i].reads_frame) interior += pieces[i].out_local.volume();
      for (size_t j = 0; j < i; ++j) {
        EXPECT_TRUE(
            intersect(pieces[i].out_local, pieces[j].out_local).empty());
      }
      const Box& reads = pieces[i].reads_frame ? buffer : in;
      for (size_t d = 0; d < pieces[i].taps.size(); ++d) {
        const LocalTaps& t = pieces[i].taps[d];
        ASSERT_EQ(static_cast<Index>(t.i0.size()),
                  pieces[i].out_local.extent[d + 2]);
        for (size_t o = 0; o < t.i0.size(); ++o) {
          EXPECT_GE(t.i0[o], 0);
          EXPECT_LT(t.i1[o], reads.extent[d + 2]);
        }
      }
    }
    EXPECT_EQ(covered, out.volume());
    EXPECT_GE(interior * 4, out.volume() * 3);
    ASSERT_FALSE(pieces.front().reads_frame);
  }
}

// Both passes in type N against fp32 on the same values (N's), in both
// modes: each output rounded once to N; the input gradient's sums too,
// plus the halo cells' and (in place) the frame's edges added in N.
template <typename N>
void narrow_against_float() {
  // 2D, from one cell (the widest halos, from ranks further away), 3D.
  for (const Case& c : {cases()[0], cases()[4], cases()[5]}) {
    const Shape out = c.desc.dst_shape(c.src);
    const auto xn = random_vector<N>(c.src.volume(), 3);
    const auto dyn = random_vector<N>(out.volume(), 4);
    const std::vector<float> xf(xn.begin(), xn.end()),
        dyf(dyn.begin(), dyn.end());
    const bool passed = for_each_grid_and_mode(
        c.name, c.src.ndims(),
        [&](const ProcessGrid& grid, const InterpolateOptions& options) {
          const Distribution src(c.src, grid.shape());
          Interpolate<float> f(grid, c.desc, src, options);
          Interpolate<N> n(grid, c.desc, src, options);
          std::vector<float> yf, dxf;
          std::vector<N> yn, dxn;
          Passes<float>(grid, f).run(f, xf, dyf, yf, dxf);
          Passes<N>(grid, n).run(n, xn, dyn, yn, dxn);
          if (grid.rank() == 0) {
            auto wide = [](const auto& v) {
              return std::vector<double>(v.begin(), v.end());
            };
            EXPECT_LE(max_relative_error(wide(yn), wide(yf)), kRounding<N>);
            EXPECT_LE(max_relative_error(wide(dxn), wide(dxf)),
                      3 * kRounding<N>);
          }
        });
    if (!passed) return;
  }
}

TEST(Interpolate, Bf16AgainstFloatInBothModes) { narrow_against_float<bf16>(); }

TEST(Interpolate, Fp16AgainstFloatInBothModes) { narrow_against_float<fp16>(); }

TEST(Interpolate, BadInputFailsOnEveryRank) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, testing::world_size(), 1});
  const Distribution src(Shape{1, 2, 6, 4}, grid.shape());
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch, "does not fit output size",
      [&] {
        Interpolate<double>(grid, InterpolateDesc::of_size({4, 4, 4}), src);
      });
  Interpolate<double> up(grid, InterpolateDesc::of_size({12, 8}), src);
  DistTensor<double> plain(grid, HaloLayout(src)), y(grid, up.dst_layout());
  if (testing::world_size() > 1) {
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                              "src tensor's layout",
                              [&] { up.forward(plain, y); });
  }
  // The passes of the other mode and the shard layout of the buffer mode
  // are refused alike on every rank.
  InterpolateOptions in_place;
  in_place.input = ConvInput::kInPlace;
  Interpolate<double> framed(grid, InterpolateDesc::of_size({12, 8}), src,
                             in_place);
  DistTensor<double> x(grid, up.src_layout()), frame(grid, up.src_layout()),
      shard(grid, framed.shard_layout());
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "pass the shards and their frames",
                            [&] { framed.forward(x, y); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "the passes take frames only",
                            [&] { up.forward(shard, frame, y); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "the passes take frames only",
                            [&] { up.backward(y, shard, frame); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "has no shard layout",
                            [&] { (void)up.shard_layout(); });
}

}  // namespace
}  // namespace distconv
