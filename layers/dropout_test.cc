// Dropout's mask depends on the seed and global indices only: on every
// grid (channel splits, uneven and empty shards, 2D and 3D) the gathered
// output is one process's, bit for bit; channels are dropped whole; about
// p of the elements are dropped; backward applies the same mask; p = 0
// copies and p = 1 zeroes; another seed gives another mask; bad p.
#include "layers/dropout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "distconv/scatter_gather.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

std::vector<Shape> every_grid(int ndims) {
  std::vector<Shape> grids = testing::grids_without_channel_split(ndims);
  for (const Shape& g : testing::grids_with_channel_split(ndims))
    grids.push_back(g);
  return grids;
}

// Forward and backward on `grid`, gathered onto rank 0.
std::pair<std::vector<double>, std::vector<double>> passes(
    const Shape& grid_shape, const Shape& shape, const DropoutDesc& desc,
    const std::vector<double>& x, std::uint64_t seed) {
  ProcessGrid grid(MPI_COMM_WORLD, grid_shape);
  Dropout<double> drop(grid, desc, Distribution(shape, grid_shape));
  DistTensor<double> xs(grid, drop.layout()), ys(grid, drop.layout());
  scatter(x.data(), xs, 0);
  drop.forward(xs, ys, seed);
  drop.backward(xs, xs, seed);  // in place
  std::vector<double> y(x.size()), dx(x.size());
  gather(ys, y.data(), 0);
  gather(xs, dx.data(), 0);
  return {y, dx};
}

TEST(Dropout, SameMaskOnEveryGrid) {
  for (const Shape& shape : {Shape{3, 4, 7, 5}, Shape{2, 3, 4, 3, 5}}) {
    const auto x = random_values<double>(shape.volume(), 1, 2.0);  // no 0
    for (DropoutKind kind : {DropoutKind::kElements, DropoutKind::kChannels}) {
      const DropoutDesc desc{0.3, kind};
      const Shape one = Shape::filled(shape.ndims(), 1);
      const auto [y1, dx1] = [&] {
        ProcessGrid self(MPI_COMM_SELF, one);
        Dropout<double> drop(self, desc, Distribution(shape, one));
        DistTensor<double> xs(self, drop.layout()), ys(self, drop.layout());
        scatter(x.data(), xs, 0);
        drop.forward(xs, ys, 42);
        std::vector<double> y(x.size());
        gather(ys, y.data(), 0);
        return std::make_pair(y, y);
      }();
      for (const Shape& g : every_grid(shape.ndims())) {
        SCOPED_TRACE("grid " + g.to_string());
        const auto [y, dx] = passes(g, shape, desc, x, 42);
        if (testing::world_rank() != 0) continue;
        EXPECT_EQ(y, y1);
        EXPECT_EQ(dx, y1);  // backward of x is forward's mask on x
      }
      if (testing::world_rank() != 0) continue;
      // Kept values are scaled by 1 / (1 - p); channels drop whole.
      Index dropped = 0;
      const Index per_channel = shape.volume() / (shape[0] * shape[1]);
      for (size_t i = 0; i < x.size(); ++i) {
        if (y1[i] == 0) {
          ++dropped;
        } else {
          EXPECT_NEAR(y1[i], x[i] / 0.7, 1e-14);
        }
        if (kind == DropoutKind::kChannels) {
          const size_t first = i / per_channel * per_channel;
          EXPECT_EQ(y1[i] == 0, y1[first] == 0);
        }
      }
      const double fraction = double(dropped) / double(x.size());
      EXPECT_GT(fraction, kind == DropoutKind::kElements ? 0.2 : 0.05);
      EXPECT_LT(fraction, kind == DropoutKind::kElements ? 0.4 : 0.6);
    }
  }
}

TEST(Dropout, FractionSeedsAndLimits) {
  const Shape shape{4, 8, 32, 32};
  const auto x = random_values<double>(shape.volume(), 2, 2.0);
  const Shape g = testing::spatial_grid(4);
  const DropoutDesc half{0.5, DropoutKind::kElements};
  const auto [a, da] = passes(g, shape, half, x, 1);
  const auto [b, db] = passes(g, shape, half, x, 2);
  const auto [zero, dz] = passes(g, shape, {0.0, DropoutKind::kElements}, x, 1);
  const auto [all, dall] = passes(g, shape, {1.0, DropoutKind::kElements}, x, 1);
  if (testing::world_rank() != 0) return;
  Index dropped = 0, differ = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    dropped += a[i] == 0;
    differ += (a[i] == 0) != (b[i] == 0);
  }
  // 32768 elements: 5 standard deviations of a binomial is under 0.014.
  EXPECT_NEAR(double(dropped) / double(x.size()), 0.5, 0.014);
  EXPECT_NEAR(double(differ) / double(x.size()), 0.5, 0.014);
  EXPECT_EQ(zero, x);
  for (double v : all) EXPECT_EQ(v, 0.0);
}

TEST(Dropout, BadProbability) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, testing::world_size(), 1});
  const Distribution src(Shape{1, 2, 8, 4}, grid.shape());
  for (double p : {-0.1, 1.5, double(NAN)}) {
    testing::expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "must be in [0, 1]",
        [&] { Dropout<float>(grid, {p, DropoutKind::kElements}, src); });
  }
}

}  // namespace
}  // namespace distconv
