// The distributed adaptive pooling against serial loops on the gathered
// tensors, on every grid the rank count factors into (channel splits
// included), 1D to 3D, global pooling, output sizes that do not divide the
// input and larger than it, uneven and empty shards: average and max,
// forward and backward; average's backward as the adjoint of its forward;
// max's choice among equal values and NaNs whatever the split; bf16
// against fp32; bad input.
#include "layers/adaptive_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;

struct Case {
  std::string name;
  Shape src;
  Shape size;
};

std::vector<Case> cases() {
  return {
      {"global_2d", {3, 4, 7, 5}, {1, 1}},
      {"uneven_windows", {2, 3, 10, 7}, {3, 4}},
      {"larger_than_input", {1, 2, 3, 4}, {5, 6}},
      {"global_3d", {2, 3, 4, 5, 3}, {1, 1, 1}},
      {"3d", {1, 2, 5, 4, 6}, {2, 3, 4}},
      {"1d", {3, 2, 9}, {4}},
  };
}

// Serial adaptive pooling on the global NC... arrays: PyTorch's windows,
// the first maximum in row-major order (the last NaN).
struct Serial {
  std::vector<double> y, dx;
};

Serial serial(const Case& c, AdaptivePoolKind kind,
              const std::vector<double>& x, const std::vector<double>& dy) {
  const AdaptivePoolDesc desc{kind, c.size};
  const Shape out = desc.dst_shape(c.src);
  Serial s{std::vector<double>(out.volume()),
           std::vector<double>(c.src.volume(), 0.0)};
  const auto xv = StridedView<const double>::contiguous(x.data(), c.src);
  auto dxv = StridedView<double>::contiguous(s.dx.data(), c.src);
  const auto dyv = StridedView<const double>::contiguous(dy.data(), out);
  auto yv = StridedView<double>::contiguous(s.y.data(), out);
  const int k = c.size.ndims();
  yv.for_each([&](const Shape& o, double& v) {
    Box w{o, o};
    for (int d = 0; d < k; ++d) {
      const auto r = AdaptivePoolDesc::window(c.src[d + 2], c.size[d], o[d + 2]);
      w.lower[d + 2] = r.first;
      w.extent[d + 2] = r.second - r.first;
    }
    w.extent[0] = w.extent[1] = 1;
    double sum = 0, best = -std::numeric_limits<double>::infinity();
    Shape at = w.lower;
    bool first = true;
    StridedView<const double>::contiguous(x.data(), c.src)
        .subview(w)
        .for_each([&](const Shape& i, const double& val) {
          sum += val;
          if (first || val > best || std::isnan(val)) {
            best = val;
            at = i + w.lower;
          }
          first = false;
        });
    const double cells = static_cast<double>(w.volume());
    const double g = dyv(o);
    if (kind == AdaptivePoolKind::kAverage) {
      v = sum / cells;
      dxv.subview(w).for_each([&](const Shape&, double& d) { d += g / cells; });
    } else {
      v = best;
      dxv(at) += g;
    }
  });
  (void)xv;
  return s;
}

std::vector<Shape> every_grid(int ndims) {
  std::vector<Shape> grids = testing::grids_without_channel_split(ndims);
  for (const Shape& g : testing::grids_with_channel_split(ndims))
    grids.push_back(g);
  return grids;
}

struct PoolRun {
  std::vector<double> y, dx;
  double dot_y_dy = 0, dot_x_dx = 0;  // over the distributed tensors
};

template <typename T>
PoolRun run(const ProcessGrid& grid, const Case& c, AdaptivePoolKind kind,
        const std::vector<T>& x, const std::vector<T>& dy) {
  AdaptivePooling<T> pool(grid, {kind, c.size}, Distribution(c.src, grid.shape()));
  DistTensor<T> xs(grid, pool.src_layout()), ys(grid, pool.dst_layout()),
      dys(grid, pool.diff_dst_layout()), dxs(grid, pool.diff_src_layout());
  scatter(x.data(), xs, 0);
  scatter(dy.data(), dys, 0);
  pool.forward(xs, ys);
  pool.backward(dys, dxs);
  const Shape out = AdaptivePoolDesc{kind, c.size}.dst_shape(c.src);
  std::vector<T> y(out.volume()), dx(c.src.volume());
  gather(ys, y.data(), 0);
  gather(dxs, dx.data(), 0);
  PoolRun r{std::vector<double>(y.begin(), y.end()),
        std::vector<double>(dx.begin(), dx.end())};
  double a = 0, b = 0;
  ys.interior().for_each([&](const Shape& i, T& v) {
    a += double(v) * double(std::as_const(dys).interior()(i));
  });
  xs.interior().for_each([&](const Shape& i, T& v) {
    b += double(v) * double(std::as_const(dxs).interior()(i));
  });
  r.dot_y_dy = testing::sum_over(MPI_COMM_WORLD, a);
  r.dot_x_dx = testing::sum_over(MPI_COMM_WORLD, b);
  return r;
}

TEST(AdaptivePooling, MatchesTheSerialLoopsOnEveryGrid) {
  for (const Case& c : cases()) {
    for (AdaptivePoolKind kind :
         {AdaptivePoolKind::kAverage, AdaptivePoolKind::kMax}) {
      const Shape out = AdaptivePoolDesc{kind, c.size}.dst_shape(c.src);
      const auto x = random_vector<double>(c.src.volume(), 1);
      const auto dy = random_vector<double>(out.volume(), 2);
      const Serial want = serial(c, kind, x, dy);
      for (const Shape& g : every_grid(c.src.ndims())) {
        SCOPED_TRACE(c.name + " " + to_string(kind) + " on grid " +
                     g.to_string());
        ProcessGrid grid(MPI_COMM_WORLD, g);
        const PoolRun got = run<double>(grid, c, kind, x, dy);
        if (grid.rank() == 0) {
          EXPECT_LE(max_relative_error(got.y, want.y), 1e-14) << "forward";
          EXPECT_LE(max_relative_error(got.dx, want.dx), 1e-14)
              << "backward";
        }
        if (kind == AdaptivePoolKind::kAverage) {  // linear: its adjoint
          EXPECT_NEAR(got.dot_y_dy, got.dot_x_dx,
                      1e-12 * std::max(1.0, std::abs(got.dot_y_dy)));
        }
        if (testing::max_over(MPI_COMM_WORLD,
                              ::testing::Test::HasFailure())) {
          return;
        }
      }
    }
  }
}

// Equal values and NaNs spread over the ranks: the first maximum in
// row-major order, the last NaN, on every grid.
TEST(AdaptivePooling, MaxTiesAndNaNsAsOneProcess) {
  const Case c{"ties", {1, 2, 6, 6}, {1, 2}};
  std::vector<double> x(c.src.volume(), 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Channel 1: NaNs at two cells of the left window.
  x[36 + 1 * 6 + 0] = nan;
  x[36 + 4 * 6 + 2] = nan;
  const auto dy = random_vector<double>(4, 3);
  const Serial want = serial(c, AdaptivePoolKind::kMax, x, dy);
  for (const Shape& g : every_grid(4)) {
    SCOPED_TRACE("grid " + g.to_string());
    ProcessGrid grid(MPI_COMM_WORLD, g);
    const PoolRun got = run<double>(grid, c, AdaptivePoolKind::kMax, x, dy);
    if (grid.rank() == 0) {
      for (size_t i = 0; i < want.dx.size(); ++i) {
        ASSERT_EQ(got.dx[i], want.dx[i]) << "cell " << i;
      }
      EXPECT_TRUE(std::isnan(got.y[2]));
      EXPECT_EQ(got.y[0], 1.0);
    }
  }
}

TEST(AdaptivePooling, Bf16AgainstFloat) {
  const Case c = cases()[1];
  const auto xd = random_vector<double>(c.src.volume(), 4);
  const Shape out = AdaptivePoolDesc{AdaptivePoolKind::kAverage, c.size}
                        .dst_shape(c.src);
  const auto gd = random_vector<double>(out.volume(), 5);
  std::vector<bf16> xb(xd.begin(), xd.end()), gb(gd.begin(), gd.end());
  std::vector<float> xf(xb.begin(), xb.end()), gf(gb.begin(), gb.end());
  for (const Shape& g : every_grid(4)) {
    ProcessGrid grid(MPI_COMM_WORLD, g);
    for (AdaptivePoolKind kind :
         {AdaptivePoolKind::kAverage, AdaptivePoolKind::kMax}) {
      const PoolRun f = run<float>(grid, c, kind, xf, gf);
      const PoolRun b = run<bf16>(grid, c, kind, xb, gb);
      if (grid.rank() == 0) {
        EXPECT_LE(max_relative_error(b.y, f.y), kRounding<bf16>);
        EXPECT_LE(max_relative_error(b.dx, f.dx), kRounding<bf16>);
      }
    }
  }
}

TEST(AdaptivePooling, BadInputFailsOnEveryRank) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, testing::world_size(), 1});
  const Distribution src(Shape{1, 2, 8, 4}, grid.shape());
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "must be >= 1", [&] {
                              AdaptivePooling<double>(
                                  grid, {AdaptivePoolKind::kMax, Shape{0, 2}},
                                  src);
                            });
  AdaptivePooling<double> pool(grid, {AdaptivePoolKind::kMax, Shape{2, 2}},
                               src);
  DistTensor<double> dy(grid, pool.dst_layout()), dx(grid, pool.src_layout());
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "before any forward",
                            [&] { pool.backward(dy, dx); });
}

}  // namespace
}  // namespace distconv
