// The distributed transposed convolution against the reference kernels
// (the adjoint convolution's backward-data, forward and backward-weights)
// on the gathered global tensors, on every grid the rank count factors into
// (channels whole), with the output side in buffers with halos and in
// place; a hand-worked case; adjoint identities; bad input.
#include "layers/deconvolution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/reference/deconv.h"
#include "layers/deconv_cases.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::deconv;
using testing::deconv_cases;
using testing::DeconvCase;
using testing::grids_without_channel_split;
using testing::spatial_grid;
using testing::world_size;

template <typename T>
struct Global {
  std::vector<T> y, dx, dw, db;
};

template <typename T>
Global<T> reference_results(const DeconvDesc& d, const Shape& x_shape,
                            const std::vector<T>& x, const std::vector<T>& w,
                            const std::vector<T>& b, const std::vector<T>& dy) {
  const Shape y_shape = d.dst_shape(x_shape);
  Global<T> r{std::vector<T>(y_shape.volume()),
              std::vector<T>(x_shape.volume()), std::vector<T>(w.size()),
              std::vector<T>(b.size())};
  reference::deconv_fwd(d, x_shape, x.data(), w.data(), b.data(), y_shape,
                        r.y.data());
  reference::deconv_bwd_data(d, y_shape, dy.data(), w.data(), x_shape,
                             r.dx.data());
  reference::deconv_bwd_weights(d, x_shape, x.data(), y_shape, dy.data(),
                                r.dw.data(), r.db.data());
  return r;
}

// The passes of either mode: the output side's tensors `y` and `dy` are
// shards in place (with `frame`, garbage between passes), else buffers
// with halos.
template <typename T, typename P>
struct Passes {
  Deconvolution<T>& layer;
  DistTensor<T>& frame;
  bool in_place() const { return layer.plan().in_place(); }
  const HaloLayout& y_layout() const {
    return in_place() ? layer.shard_layout() : layer.dst_layout();
  }
  void forward(const DistTensor<T>& x, const P* w, const P* b,
               DistTensor<T>& y) {
    if (!in_place()) return layer.forward(x, w, b, y);
    frame.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
    layer.forward(x, w, b, y, frame);
  }
  void backward_weights(const DistTensor<T>& x, DistTensor<T>& dy, P* dw,
                        P* db) {
    if (!in_place()) return layer.backward_weights(x, dy, dw, db);
    layer.backward_weights(x, dy, frame, dw, db);
  }
  void backward_data(DistTensor<T>& dy, const P* w, DistTensor<T>& dx) {
    if (!in_place()) return layer.backward_data(dy, w, dx);
    frame.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
    layer.backward_data(dy, frame, w, dx);
  }
};

DeconvolutionOptions reading(ConvInput input) {
  DeconvolutionOptions o;
  o.input = input;
  return o;
}

// Forward and backward on `grid`, twice (plans are reusable); the gathered
// results must match the reference.
template <typename T>
void ExpectMatchesReference(const DeconvCase& c, const ProcessGrid& grid,
                            double tol,
                            ConvInput input = ConvInput::kHaloBuffer) {
  const DeconvDesc& d = c.desc;
  const Shape y_shape = d.dst_shape(c.src_shape);
  const bool bias = d.bias == ConvBias::kAdd;
  const auto x = random_vector<T>(c.src_shape.volume(), 1);
  const auto w = random_vector<T>(d.weights_shape().volume(), 2);
  const auto b = random_vector<T>(bias ? d.out_channels : 0, 3);
  const auto dy = random_vector<T>(y_shape.volume(), 4);
  Deconvolution<T> layer(grid, d, Distribution(c.src_shape, grid.shape()),
                         reading(input));
  SCOPED_TRACE(layer.describe());
  DistTensor<T> frame(grid, layer.dst_layout());
  Passes<T, T> run{layer, frame};
  DistTensor<T> xt(grid, layer.src_layout()), yt(grid, run.y_layout());
  DistTensor<T> dyt(grid, run.y_layout());
  DistTensor<T> dxt(grid, layer.diff_src_layout());
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  // Garbage in the outputs must not survive.
  yt.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  dxt.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  std::vector<T> dw(w.size(), T(1e6)), db(b.size(), T(1e6));
  for (int repeat = 0; repeat < 2; ++repeat) {
    run.forward(xt, w.data(), bias ? b.data() : nullptr, yt);
    run.backward_weights(xt, dyt, dw.data(), bias ? db.data() : nullptr);
    run.backward_data(dyt, w.data(), dxt);
    layer.wait_gradients();
  }
  std::vector<T> y(y_shape.volume()), dx(c.src_shape.volume());
  gather(yt, y.data(), 0);
  gather(dxt, dx.data(), 0);
  if (grid.rank() != 0) return;
  const Global<T> r = reference_results(d, c.src_shape, x, w, b, dy);
  EXPECT_LE(max_relative_error(y, r.y), tol) << "forward";
  EXPECT_LE(max_relative_error(dx, r.dx), tol) << "backward-data";
  EXPECT_LE(max_relative_error(dw, r.dw), tol) << "backward-weights";
  if (bias) {
    EXPECT_LE(max_relative_error(db, r.db), tol) << "bias gradient";
  }
}

// Tensors of N (bf16 or fp16) with fp32 weights against the double
// reference on the same (N-exact) data: y and dx within 4 roundings of N
// of their magnitude (the same passes on |x|, |w|), the fp32 weight
// gradients as in fp32.
template <typename N>
void ExpectNarrowMatchesReference(const DeconvCase& c, const ProcessGrid& grid,
                                  ConvInput input) {
  const DeconvDesc& d = c.desc;
  const Shape y_shape = d.dst_shape(c.src_shape);
  const bool bias = d.bias == ConvBias::kAdd;
  const auto x = random_vector<N>(c.src_shape.volume(), 1);
  const auto w = random_vector<float>(d.weights_shape().volume(), 2);
  const auto b = random_vector<float>(bias ? d.out_channels : 0, 3);
  const auto dy = random_vector<N>(y_shape.volume(), 4);
  const auto wide = [](const auto& v) {
    return std::vector<double>(v.begin(), v.end());
  };
  Deconvolution<N> layer(grid, d, Distribution(c.src_shape, grid.shape()),
                         reading(input));
  DistTensor<N> frame(grid, layer.dst_layout());
  Passes<N, float> run{layer, frame};
  DistTensor<N> xt(grid, layer.src_layout()), yt(grid, run.y_layout());
  DistTensor<N> dyt(grid, run.y_layout());
  DistTensor<N> dxt(grid, layer.diff_src_layout());
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  std::vector<float> dw(w.size(), 1e6f), db(b.size(), 1e6f);
  run.forward(xt, w.data(), bias ? b.data() : nullptr, yt);
  run.backward_weights(xt, dyt, dw.data(), bias ? db.data() : nullptr);
  run.backward_data(dyt, w.data(), dxt);
  layer.wait_gradients();
  const std::vector<N> y = gathered(yt), dx = gathered(dxt);
  if (grid.rank() != 0) return;
  const Global<double> r =
      reference_results(d, c.src_shape, wide(x), wide(w), wide(b), wide(dy));
  const Global<double> m =
      reference_results(d, c.src_shape, absolute(wide(x)), absolute(wide(w)),
                        absolute(wide(b)), absolute(wide(dy)));
  EXPECT_EQ(cells_outside(y, r.y, m.y, 4 * kRounding<N>), 0) << "forward";
  EXPECT_EQ(cells_outside(dx, r.dx, m.dx, 4 * kRounding<N>), 0)
      << "backward-data";
  EXPECT_LE(max_relative_error(wide(dw), r.dw), 2e-5) << "backward-weights";
  if (bias) {
    EXPECT_LE(max_relative_error(wide(db), r.db), 2e-5) << "bias gradient";
  }
}

TEST(Deconvolution, Bf16AndFp16MatchTheReferenceOnEveryGrid) {
  for (const DeconvCase& c : deconv_cases()) {
    for (const Shape& shape :
         grids_without_channel_split(c.src_shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      SCOPED_TRACE(c.name + " on grid " + shape.to_string());
      for (ConvInput in : {ConvInput::kHaloBuffer, ConvInput::kInPlace}) {
        ExpectNarrowMatchesReference<bf16>(c, grid, in);
        ExpectNarrowMatchesReference<fp16>(c, grid, in);
      }
      if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure()) !=
          0) {
        return;
      }
    }
  }
}

template <typename T>
void ForEveryCaseAndGrid(double tol, ConvInput input) {
  for (const DeconvCase& c : deconv_cases()) {
    for (const Shape& shape :
         grids_without_channel_split(c.src_shape.ndims())) {
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

TEST(Deconvolution, DoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>(1e-12, ConvInput::kHaloBuffer);
}

TEST(Deconvolution, FloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>(1e-5, ConvInput::kHaloBuffer);
}

// In place: the interior pieces read and write the output side's shards,
// the boundary pieces the frames; contributions overlapping across pieces
// add up.
TEST(Deconvolution, InPlaceDoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>(1e-12, ConvInput::kInPlace);
}

TEST(Deconvolution, InPlaceFloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>(1e-5, ConvInput::kInPlace);
}

// Two input channels, one output channel, kernel 1x2, stride 2, as
// PyTorch's ConvTranspose2d(2, 1, (1, 2), stride=2) with weights
// (in, out, kh, kw): each input cell spreads over two output cells.
TEST(Deconvolution, HandWorkedCase) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  DeconvDesc d = DeconvDesc::make(2, 1, {1, 2});
  d.stride = {2, 2};
  const std::vector<double> x = {1, 2, 3, 4};        // channel 0: 1 2, 1: 3 4
  const std::vector<double> w = {1, 10, 100, 1000};  // in 0: 1 10, in 1: ...
  Deconvolution<double> layer(grid, d,
                              Distribution(Shape{1, 2, 1, 2}, grid.shape()));
  DistTensor<double> xt(grid, layer.src_layout()), yt(grid, layer.dst_layout());
  scatter(x.data(), xt, 0);
  layer.forward(xt, w.data(), nullptr, yt);
  std::vector<double> y(4);
  gather(yt, y.data(), 0);
  if (grid.rank() == 0) {
    EXPECT_EQ(y, (std::vector<double>{1 + 300, 10 + 3000, 2 + 400, 20 + 4000}));
  }
}

// Many small partitions: a 5x5 input (10x10 output) over the squarest
// spatial grid of all ranks, so that shards are one or two cells or empty.
TEST(Deconvolution, ManySmallPartitions) {
  ProcessGrid grid(MPI_COMM_WORLD, testing::squarest_hw_grid());
  for (const DeconvCase& c : deconv_cases()) {
    if (c.src_shape.ndims() != 4) continue;
    DeconvCase small = c;
    small.src_shape[2] = small.src_shape[3] = 5;
    SCOPED_TRACE(c.name + " 5x5 on grid " + grid.shape().to_string());
    for (ConvInput input : {ConvInput::kHaloBuffer, ConvInput::kInPlace}) {
      ExpectMatchesReference<double>(small, grid, 1e-12, input);
      ExpectMatchesReference<float>(small, grid, 1e-5, input);
    }
  }
}

// <deconv(x), y> == <x, backward_data(y)> (the reverse halo exchange in
// forward against the forward one in backward) and <deconv_w(x), y> ==
// <w, backward_weights(x, y)>, distributed, in double, without bias.
TEST(Deconvolution, BackwardPassesAreTheAdjointsOfForward) {
  for (DeconvCase c : deconv_cases()) {
    c.desc.bias = ConvBias::kNone;
    ProcessGrid grid(MPI_COMM_WORLD, spatial_grid(c.src_shape.ndims()));
    SCOPED_TRACE(c.name + " on grid " + grid.shape().to_string());
    const Shape y_shape = c.desc.dst_shape(c.src_shape);
    const auto x = random_vector<double>(c.src_shape.volume(), 5);
    const auto y = random_vector<double>(y_shape.volume(), 6);
    const auto w = random_vector<double>(c.desc.weights_shape().volume(), 7);
    for (ConvInput input : {ConvInput::kHaloBuffer, ConvInput::kInPlace}) {
      Deconvolution<double> layer(grid, c.desc,
                                  Distribution(c.src_shape, grid.shape()),
                                  reading(input));
      DistTensor<double> frame(grid, layer.dst_layout());
      Passes<double, double> run{layer, frame};
      DistTensor<double> xt(grid, layer.src_layout());
      DistTensor<double> ax(grid, run.y_layout()), yt(grid, run.y_layout());
      DistTensor<double> aty(grid, layer.diff_src_layout());
      scatter(x.data(), xt, 0);
      scatter(y.data(), yt, 0);
      run.forward(xt, w.data(), nullptr, ax);
      run.backward_data(yt, w.data(), aty);
      const double lhs = testing::global_dot(ax, yt);
      EXPECT_NEAR(lhs, testing::global_dot(xt, aty),
                  1e-12 * std::max(1.0, std::abs(lhs)));
      std::vector<double> dw(w.size());
      run.backward_weights(xt, yt, dw.data(), nullptr);
      layer.wait_gradients();
      double rhs = 0;
      for (size_t i = 0; i < w.size(); ++i) rhs += w[i] * dw[i];
      EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, std::abs(lhs)));
    }
  }
}

TEST(Deconvolution, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  DeconvDesc up = deconv(4, 2, {2, 2}, {2, 2}, {0, 0}, {0, 0});
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "expects 4", [&] {
        Deconvolution<float>(grid, up,
                             Distribution(Shape{1, 3, 4, 4}, grid.shape()));
      });
  DeconvDesc bad = up;
  bad.output_padding = {2, 0};
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "smaller than the stride", [&] {
        Deconvolution<float>(grid, bad,
                             Distribution(Shape{1, 4, 4, 4}, grid.shape()));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Deconvolution<float>(
            grid, up, Distribution(Shape{1, 4, 4, 4}, Shape{1, 1, 1, n + 1}));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "must be >= 0", [&] {
        Deconvolution<float>(grid, up,
                             Distribution(Shape{-1, 4, 4, 4}, grid.shape()));
      });
  if (n > 1) {
    ProcessGrid channels(comm, Shape{1, n, 1, 1});
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kUnsupported, "splits channels", [&] {
          Deconvolution<float>(
              channels, up, Distribution(Shape{1, 4, 4, 4}, channels.shape()));
        });
  }
  Deconvolution<float> layer(grid, up,
                             Distribution(Shape{1, 4, 4 * n, 4}, grid.shape()));
  DistTensor<float> x(grid, layer.src_layout()), y(grid, layer.dst_layout());
  const std::vector<float> w(up.weights_shape().volume(), 1.0f);
  std::vector<float> dw(w.size());
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "dst tensor's layout",
      [&] { layer.forward(x, w.data(), nullptr, x); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kState,
                                     "no backward_weights in flight",
                                     [&] { layer.wait_gradients(); });
  layer.backward_weights(x, y, dw.data(), nullptr);
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kState, "called again before wait_gradients",
      [&] { layer.backward_weights(x, y, dw.data(), nullptr); });
  layer.wait_gradients();  // still usable
  layer.forward(x, w.data(), nullptr, y);
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "frames only when planned",
      [&] { layer.forward(x, w.data(), nullptr, y, y); });
  Deconvolution<float> in_place(
      grid, up, Distribution(Shape{1, 4, 4 * n, 4}, grid.shape()),
      reading(ConvInput::kInPlace));
  DistTensor<float> ys(grid, in_place.shard_layout()),
      frame(grid, in_place.dst_layout());
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "pass the shards and their frames",
      [&] { in_place.forward(x, w.data(), nullptr, ys); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "dst_frame tensor's layout",
      [&] { in_place.forward(x, w.data(), nullptr, ys, x); });
  in_place.forward(x, w.data(), nullptr, ys, frame);  // still usable
  in_place.backward_data(ys, frame, w.data(), x);
}

}  // namespace
}  // namespace distconv
