// The distributed group and instance normalisation against the reference
// loops on the gathered tensors, on every grid the rank count factors into
// (channel splits between whole groups included; those cutting a group
// refused on every rank), 1D, 2D and 3D, uneven and empty shards: forward
// and backward in training, with and without scale and shift; instance
// normalisation's running statistics over two steps and inference; the
// statistics' stability on 1e4 + noise; fp32 and bf16 against the double
// reference; bad input.
#include "layers/group_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/reference/group_norm.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::grids_with_channel_split;
using testing::grids_without_channel_split;

struct GnCase {
  std::string name;
  Shape shape;
  Index groups;
};

std::vector<GnCase> cases() {
  return {
      {"2d_two_groups", {3, 8, 7, 6}, 2},
      {"2d_instance", {2, 4, 5, 6}, 4},
      {"2d_one_group", {2, 3, 6, 5}, 1},
      // Shards empty on most grids of 4+ ranks (N = 1, H = 2).
      {"2d_tiny_empty_shards", {1, 4, 2, 3}, 2},
      {"3d", {2, 6, 4, 5, 3}, 3},
      {"1d", {4, 4, 10}, 2},
  };
}

std::vector<Shape> every_grid(int ndims) {
  std::vector<Shape> grids = grids_without_channel_split(ndims);
  for (const Shape& g : grids_with_channel_split(ndims)) grids.push_back(g);
  return grids;
}

// Whether the channel parts of `grid` cut a group.
bool cuts_a_group(const GnCase& c, const Shape& grid) {
  const BlockPartition p =
      BlockPartition::balanced(c.shape[1], static_cast<int>(grid[1]));
  for (int i = 0; i < p.parts(); ++i) {
    if (p.begin(i) % (c.shape[1] / c.groups) != 0) return true;
  }
  return false;
}

template <typename T, typename U>
std::vector<T> narrowed(const std::vector<U>& v) {
  std::vector<T> out;
  for (const U& u : v) out.push_back(static_cast<T>(static_cast<double>(u)));
  return out;
}

std::vector<double> widened(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Scatters x and dy, runs forward and backward, gathers y and dx onto rank
// 0; the parameter gradients on every rank.
template <typename T>
struct GnRun {
  GroupNorm<T> layer;
  DistTensor<T> x, y, dy, dx;
  std::vector<Compute<T>> dscale, dshift;

  GnRun(const ProcessGrid& grid, const Shape& shape, const GroupNormOptions& o)
      : layer(grid, Distribution(shape, grid.shape()), o),
        x(grid, layer.src_layout()),
        y(grid, layer.src_layout()),
        dy(grid, layer.src_layout()),
        dx(grid, layer.src_layout()),
        dscale(shape[1], Compute<T>(7)),
        dshift(shape[1], Compute<T>(7)) {}

  void passes(const std::vector<T>& xg, const std::vector<T>& dyg,
              const Compute<T>* scale, const Compute<T>* shift,
              std::vector<T>& yg, std::vector<T>& dxg, bool want_params) {
    scatter(xg.data(), x, 0);
    scatter(dyg.data(), dy, 0);
    layer.forward(x, scale, shift, y);
    layer.backward(x, dy, scale, dx, want_params ? dscale.data() : nullptr,
                   want_params ? dshift.data() : nullptr);
    gather(y, yg.data(), 0);
    gather(dx, dxg.data(), 0);
  }
};

TEST(GroupNorm, MatchesTheReferenceOnEveryGrid) {
  for (const GnCase& c : cases()) {
    const auto x = random_values<double>(c.shape.volume(), 1, 0.5);
    const auto dy = random_vector<double>(c.shape.volume(), 2);
    const auto scale = random_values<double>(c.shape[1], 3, 1.0);
    const auto shift = random_vector<double>(c.shape[1], 4);
    std::vector<double> y_ref(x.size()), dx_ref(x.size()),
        ds_ref(c.shape[1]), db_ref(c.shape[1]);
    std::vector<double> y_plain(x.size()), dx_plain(x.size()),
        ds_plain(c.shape[1]), db_plain(c.shape[1]);
    reference::group_norm_fwd(c.shape, c.groups, x.data(), scale.data(),
                              shift.data(), 1e-5, y_ref.data());
    reference::group_norm_bwd(c.shape, c.groups, x.data(), dy.data(),
                              scale.data(), 1e-5, dx_ref.data(),
                              ds_ref.data(), db_ref.data());
    reference::group_norm_fwd(c.shape, c.groups, x.data(), nullptr, nullptr,
                              1e-5, y_plain.data());
    reference::group_norm_bwd(c.shape, c.groups, x.data(), dy.data(), nullptr,
                              1e-5, dx_plain.data(), ds_plain.data(),
                              db_plain.data());
    for (const Shape& g : every_grid(c.shape.ndims())) {
      SCOPED_TRACE(c.name + " on grid " + g.to_string());
      ProcessGrid grid(MPI_COMM_WORLD, g);
      GroupNormOptions o;
      o.groups = c.groups;
      if (cuts_a_group(c, g)) {
        expect_error_on_all_ranks(
            MPI_COMM_WORLD, ErrorKind::kUnsupported, "inside a group",
            [&] { GroupNorm<double>(grid, Distribution(c.shape, g), o); });
        continue;
      }
      GnRun<double> run(grid, c.shape, o);
      std::vector<double> y(x.size()), dx(x.size());
      run.passes(x, dy, scale.data(), shift.data(), y, dx, true);
      if (grid.rank() == 0) {
        EXPECT_LE(max_relative_error(y, y_ref), 1e-12) << "forward";
        EXPECT_LE(max_relative_error(dx, dx_ref), 1e-10) << "backward";
      }
      EXPECT_LE(max_relative_error(run.dscale, ds_ref), 1e-10);
      EXPECT_LE(max_relative_error(run.dshift, db_ref), 1e-10);
      // No affine: null scale and shift.
      run.passes(x, dy, nullptr, nullptr, y, dx, true);
      if (grid.rank() == 0) {
        EXPECT_LE(max_relative_error(y, y_plain), 1e-12) << "plain forward";
        EXPECT_LE(max_relative_error(dx, dx_plain), 1e-10) << "plain backward";
      }
      EXPECT_LE(max_relative_error(run.dscale, ds_plain), 1e-10);
      if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure())) {
        return;
      }
    }
  }
}

// Instance normalisation with running statistics: two training steps
// (each sample's mean and unbiased variance averaged over the batch),
// then inference with them, forward and backward.
TEST(GroupNorm, InstanceNormRunningStatistics) {
  const Shape shape{3, 4, 5, 6};
  const Index channels = shape[1], spatial = shape[2] * shape[3];
  const auto x1 = random_values<double>(shape.volume(), 5, 0.3);
  const auto x2 = random_values<double>(shape.volume(), 6, -0.2);
  const auto dy = random_vector<double>(shape.volume(), 7);
  const auto scale = random_values<double>(channels, 8, 1.0);
  const double m = 0.25;
  std::vector<double> mean(channels, 0.0), var(channels, 1.0);
  for (const auto* xs : {&x1, &x2}) {
    std::vector<double> y(xs->size()), mu(shape[0] * channels),
        v(shape[0] * channels);
    reference::group_norm_fwd(shape, channels, xs->data(), nullptr, nullptr,
                              1e-5, y.data(), mu.data(), v.data());
    for (Index c = 0; c < channels; ++c) {
      double sm = 0, sv = 0;
      for (Index n = 0; n < shape[0]; ++n) {
        sm += mu[n * channels + c];
        sv += v[n * channels + c] * spatial / (spatial - 1.0);
      }
      mean[c] = (1 - m) * mean[c] + m * sm / shape[0];
      var[c] = (1 - m) * var[c] + m * sv / shape[0];
    }
  }
  std::vector<double> y_ref(x1.size()), dx_ref(x1.size());
  reference::group_norm_fwd_given(shape, x1.data(), scale.data(), nullptr,
                                  mean.data(), var.data(), 1e-5,
                                  y_ref.data());
  for (Index n = 0; n < shape[0]; ++n) {
    for (Index c = 0; c < channels; ++c) {
      for (Index i = 0; i < spatial; ++i) {
        const Index k = (n * channels + c) * spatial + i;
        dx_ref[k] = scale[c] / std::sqrt(var[c] + 1e-5) * dy[k];
      }
    }
  }
  for (const Shape& g : every_grid(4)) {
    SCOPED_TRACE("grid " + g.to_string());
    ProcessGrid grid(MPI_COMM_WORLD, g);
    GroupNormOptions o;
    o.groups = channels;
    o.running = RunningStats::kTrack;
    o.momentum = m;
    GnRun<double> run(grid, shape, o);
    std::vector<double> y(x1.size()), dx(x1.size());
    run.passes(x1, dy, nullptr, nullptr, y, dx, false);
    run.passes(x2, dy, nullptr, nullptr, y, dx, false);
    for (Index c = 0; c < channels; ++c) {
      EXPECT_NEAR(run.layer.running_mean()[c], mean[c], 1e-12);
      EXPECT_NEAR(run.layer.running_variance()[c], var[c], 1e-12);
    }
    run.layer.set_mode(BatchNormMode::kInference);
    run.passes(x1, dy, scale.data(), nullptr, y, dx, true);
    if (grid.rank() == 0) {
      EXPECT_LE(max_relative_error(y, y_ref), 1e-12) << "inference";
      EXPECT_LE(max_relative_error(dx, dx_ref), 1e-12) << "inference backward";
    }
  }
}

// 1e4 + noise: the statistics keep the noise's precision.
TEST(GroupNorm, StableOnALargeMean) {
  const Shape shape{2, 4, 8, 6};
  const auto x = random_values<double>(shape.volume(), 9, 1e4);
  std::vector<double> y_ref(x.size());
  reference::group_norm_fwd(shape, 2, x.data(), nullptr, nullptr, 1e-5,
                            y_ref.data());
  for (const Shape& g : grids_without_channel_split(4)) {
    ProcessGrid grid(MPI_COMM_WORLD, g);
    GroupNormOptions o;
    o.groups = 2;
    GnRun<float> run(grid, shape, o);
    std::vector<float> y(x.size()), dx(x.size());
    run.passes(narrowed<float>(x), narrowed<float>(y_ref), nullptr, nullptr,
               y, dx, false);
    if (grid.rank() == 0) {
      // The float inputs hold 1e4 + noise to ~5e-4: y to a few 1e-3.
      EXPECT_LE(max_relative_error(widened(y), y_ref), 5e-3);
    }
  }
}

// fp32 and bf16 (fp32 parameters) against the double reference on the same
// values.
TEST(GroupNorm, FloatAndBf16) {
  const Shape shape{2, 6, 5, 4};
  const auto x = narrowed<double>(narrowed<bf16>(
      random_values<double>(shape.volume(), 10, 0.5)));
  const auto dy = narrowed<double>(narrowed<bf16>(
      random_vector<double>(shape.volume(), 11)));
  const auto scale = random_values<double>(shape[1], 12, 1.0);
  std::vector<double> y_ref(x.size()), dx_ref(x.size()), ds(shape[1]),
      db(shape[1]);
  reference::group_norm_fwd(shape, 3, x.data(), scale.data(), nullptr, 1e-5,
                            y_ref.data());
  reference::group_norm_bwd(shape, 3, x.data(), dy.data(), scale.data(), 1e-5,
                            dx_ref.data(), ds.data(), db.data());
  const std::vector<float> scale_f = narrowed<float>(scale);
  for (const Shape& g : every_grid(4)) {
    GnCase c{"bf16", shape, 3};
    if (cuts_a_group(c, g)) continue;
    SCOPED_TRACE("grid " + g.to_string());
    ProcessGrid grid(MPI_COMM_WORLD, g);
    GroupNormOptions o;
    o.groups = 3;
    GnRun<float> f(grid, shape, o);
    std::vector<float> yf(x.size()), dxf(x.size());
    f.passes(narrowed<float>(x), narrowed<float>(dy), scale_f.data(), nullptr,
             yf, dxf, true);
    GnRun<bf16> h(grid, shape, o);
    std::vector<bf16> yh(x.size()), dxh(x.size());
    h.passes(narrowed<bf16>(x), narrowed<bf16>(dy), scale_f.data(), nullptr,
             yh, dxh, true);
    if (grid.rank() == 0) {
      EXPECT_LE(max_relative_error(widened(yf), y_ref), 1e-6);
      EXPECT_LE(max_relative_error(widened(dxf), dx_ref), 1e-5);
      EXPECT_LE(max_relative_error(std::vector<double>(yh.begin(), yh.end()),
                                   y_ref),
                2 * kRounding<bf16>);
      EXPECT_LE(max_relative_error(std::vector<double>(dxh.begin(), dxh.end()),
                                   dx_ref),
                2 * kRounding<bf16>);
    }
    EXPECT_LE(max_relative_error(widened(h.dscale), ds), 1e-5);
  }
}

TEST(GroupNorm, BadInputFailsOnEveryRank) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, testing::world_size(), 1});
  const Distribution dist(Shape{2, 6, 8, 4}, grid.shape());
  GroupNormOptions o;
  o.groups = 4;
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "must divide the channels",
                            [&] { GroupNorm<double>(grid, dist, o); });
  o.groups = 3;
  o.running = RunningStats::kTrack;
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "as in InstanceNorm",
                            [&] { GroupNorm<double>(grid, dist, o); });
  o.running = RunningStats::kNone;
  o.mode = BatchNormMode::kInference;
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "uses running statistics",
                            [&] { GroupNorm<double>(grid, dist, o); });
  o.mode = BatchNormMode::kTraining;
  GroupNorm<double> gn(grid, dist, o);
  DistTensor<double> x(grid, gn.src_layout()), dx(grid, gn.src_layout());
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kState, "backward before any forward",
      [&] { gn.backward(x, x, nullptr, dx, nullptr, nullptr); });
  DistTensor<double> other(grid, HaloLayout(Distribution(Shape{2, 6, 9, 4},
                                                         grid.shape())));
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                            "src tensor's layout",
                            [&] { gn.forward(other, nullptr, nullptr, dx); });
}

}  // namespace
}  // namespace distconv
