// The distributed batch normalisation against the reference kernels, for
// each statistics scope, on every grid the rank count factors into
// (channel splits included), 2D and 3D, fp64 and fp32: forward training,
// backward, two steps of running statistics, inference forward and
// backward. The expected results apply the reference to each block the
// scope's statistics cover: the whole tensor (kGlobal), each grid
// N-coordinate's samples (kSampleBlock), each shard (kShard, its own
// channels only). Also: backward as the adjoint of forward's derivative (with the documented sums over the sets),
// numerical stability on 1e4 + noise, in-place use, no communication for
// shard statistics, empty tensors, bad input.
#include "layers/batch_norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/reference/batch_norm.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::channel_grid;
using testing::grids_with_channel_split;
using testing::grids_without_channel_split;
using testing::spatial_grid;
using testing::world_size;

const BatchNormStats kAllStats[] = {BatchNormStats::kShard,
                                    BatchNormStats::kSampleBlock,
                                    BatchNormStats::kGlobal};

struct BnCase {
  std::string name;
  Shape shape;
};

std::vector<BnCase> cases() {
  return {
      {"2d", {3, 4, 7, 6}},
      // Shards empty on most grids of 4+ ranks (N = 1, H = 2).
      {"2d_tiny_empty_shards", {1, 3, 2, 3}},
      // 19 channels: the loops' period is 152, chunks end mid-period.
      {"2d_19_channels", {2, 19, 5, 3}},
      {"3d", {2, 3, 4, 5, 3}},
      {"3d_one_channel", {3, 1, 3, 4, 5}},
      // One spatial dimension works too.
      {"1d", {4, 3, 10}},
  };
}

// The box of `global` in a dense row-major array, copied out and back.
template <typename T>
std::vector<T> extract(const std::vector<T>& global, const Shape& shape,
                       const Box& box) {
  std::vector<T> out;
  out.reserve(box.volume());
  StridedView<const T>::contiguous(global.data(), shape)
      .subview(box)
      .for_each([&](const Shape&, const T& v) { out.push_back(v); });
  return out;
}

template <typename T>
void insert(const std::vector<T>& part, const Shape& shape, const Box& box,
            std::vector<T>& global) {
  size_t i = 0;
  StridedView<T>::contiguous(global.data(), shape)
      .subview(box)
      .for_each([&](const Shape&, T& v) { v = part[i++]; });
}

// The entries of a per-channel array `v` for the channels of `b`, and back.
template <typename V>
V channel_slice(const V& v, const Box& b) {
  return V(v.begin() + b.lower[1], v.begin() + b.lower[1] + b.extent[1]);
}

template <typename V>
void place(const V& part, const Box& b, V& v) {
  std::copy(part.begin(), part.end(), v.begin() + b.lower[1]);
}

// Every grid of all ranks for an ndims-dimensional tensor.
std::vector<Shape> every_grid(int ndims) {
  std::vector<Shape> grids = grids_without_channel_split(ndims);
  for (const Shape& g : grids_with_channel_split(ndims)) grids.push_back(g);
  return grids;
}

// The blocks of the global tensor whose statistics are computed together,
// and the one holding this rank's shard.
std::vector<Box> statistics_blocks(const Distribution& dist,
                                   BatchNormStats stats) {
  const Shape& shape = dist.global_shape();
  std::vector<Box> blocks;
  switch (stats) {
    case BatchNormStats::kGlobal:
      blocks.push_back({Shape::filled(shape.ndims(), 0), shape});
      break;
    case BatchNormStats::kSampleBlock:
      for (int p = 0; p < dist.partition(0).parts(); ++p) {
        Box b{Shape::filled(shape.ndims(), 0), shape};
        b.lower[0] = dist.partition(0).begin(p);
        b.extent[0] = dist.partition(0).size(p);
        blocks.push_back(b);
      }
      break;
    case BatchNormStats::kShard:
      for (int p = 0; p < dist.num_parts(); ++p)
        blocks.push_back(dist.shard(p));
      break;
  }
  return blocks;
}

Box my_block(const Distribution& dist, BatchNormStats stats, int rank) {
  const Shape coord = dist.part_coord(rank);
  switch (stats) {
    case BatchNormStats::kGlobal:
      return statistics_blocks(dist, stats)[0];
    case BatchNormStats::kSampleBlock:
      return statistics_blocks(dist, stats)[coord[0]];
    case BatchNormStats::kShard:
      break;
  }
  return dist.shard(rank);
}

// What the layer should produce, from the reference applied block by block
// (a block under kShard on a channel split holds some channels only).
template <typename T>
struct Expected {
  std::vector<T> y, dx;                   // global
  std::vector<T> diff_scale, diff_shift;  // this rank's block, 0 elsewhere
  std::vector<double> mean, variance;     // this rank's block, 0 elsewhere
};

template <typename T>
Expected<T> expected_training(const Distribution& dist, BatchNormStats stats,
                              int rank, const std::vector<T>& x,
                              const std::vector<T>& dy,
                              const std::vector<T>& scale,
                              const std::vector<T>& shift, double eps) {
  const Shape& shape = dist.global_shape();
  const Index channels = shape[1];
  Expected<T> e;
  e.y.assign(x.size(), T(0));
  e.dx.assign(x.size(), T(0));
  e.diff_scale.assign(channels, T(0));
  e.diff_shift.assign(channels, T(0));
  e.mean.assign(channels, 0.0);
  e.variance.assign(channels, 0.0);
  const Box mine = my_block(dist, stats, rank);
  for (const Box& b : statistics_blocks(dist, stats)) {
    const std::vector<T> xb = extract(x, shape, b), dyb = extract(dy, shape, b);
    const std::vector<T> sb = channel_slice(scale, b);
    std::vector<T> yb(xb.size()), dxb(xb.size());
    const size_t bc = static_cast<size_t>(b.extent[1]);
    std::vector<T> ds(bc), db(bc);
    std::vector<double> mean(bc), var(bc);
    reference::batch_norm_fwd_training(b.extent, xb.data(), sb.data(),
                                       channel_slice(shift, b).data(), eps,
                                       yb.data(), mean.data(), var.data());
    reference::batch_norm_bwd_training(b.extent, xb.data(), dyb.data(),
                                       sb.data(), eps, dxb.data(), ds.data(),
                                       db.data());
    insert(yb, shape, b, e.y);
    insert(dxb, shape, b, e.dx);
    if (b == mine) {
      place(ds, b, e.diff_scale);
      place(db, b, e.diff_shift);
      place(mean, b, e.mean);
      place(var, b, e.variance);
    }
  }
  return e;
}

// Inference with each block's running statistics: `running(block)` gives
// them as {mean, variance}.
template <typename T, typename Running>
Expected<T> expected_inference(const Distribution& dist, BatchNormStats stats,
                               int rank, const std::vector<T>& x,
                               const std::vector<T>& dy,
                               const std::vector<T>& scale,
                               const std::vector<T>& shift, double eps,
                               Running running) {
  const Shape& shape = dist.global_shape();
  const Index channels = shape[1];
  Expected<T> e;
  e.y.assign(x.size(), T(0));
  e.dx.assign(x.size(), T(0));
  e.diff_scale.assign(channels, T(0));
  e.diff_shift.assign(channels, T(0));
  const Box mine = my_block(dist, stats, rank);
  for (const Box& b : statistics_blocks(dist, stats)) {
    const auto [running_mean, running_var] = running(b);
    const std::vector<double> mean = channel_slice(running_mean, b);
    const std::vector<double> var = channel_slice(running_var, b);
    const std::vector<T> sb = channel_slice(scale, b);
    const std::vector<T> xb = extract(x, shape, b), dyb = extract(dy, shape, b);
    std::vector<T> yb(xb.size()), dxb(xb.size());
    std::vector<T> ds(static_cast<size_t>(b.extent[1])), db(ds.size());
    reference::batch_norm_fwd_inference(
        b.extent, xb.data(), sb.data(), channel_slice(shift, b).data(),
        mean.data(), var.data(), eps, yb.data());
    reference::batch_norm_bwd_inference(b.extent, xb.data(), dyb.data(),
                                        sb.data(), mean.data(), var.data(),
                                        eps, dxb.data(), ds.data(), db.data());
    insert(yb, shape, b, e.y);
    insert(dxb, shape, b, e.dx);
    if (b == mine) {
      place(ds, b, e.diff_scale);
      place(db, b, e.diff_shift);
    }
  }
  return e;
}

// max |got - want| / max |want|, infinite for a NaN or a size mismatch
// (tests/conv_check.h's max_relative_error lets a NaN through: std::max
// drops it).
template <typename T>
double relative_error(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return INFINITY;
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(double(got[i]) - double(want[i]));
    if (std::isnan(d)) return INFINITY;
    diff = std::max(diff, d);
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return diff / scale;
}

double max_abs_error(const std::vector<double>& got,
                     const std::vector<double>& want) {
  double m = got.size() == want.size() ? 0.0 : INFINITY;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const double d = std::abs(got[i] - want[i]);
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}

// Running statistics after two training steps from (0, 1), per block.
struct Running {
  std::vector<double> mean, variance;
};

template <typename T>
Running running_after(const Shape& shape, const Box& b,
                      const std::vector<std::vector<T>>& steps,
                      double momentum) {
  const Index channels = shape[1], bc = b.extent[1];
  Running r{std::vector<double>(channels, 0.0),
            std::vector<double>(channels, 1.0)};
  std::vector<double> rm = channel_slice(r.mean, b);
  std::vector<double> rv = channel_slice(r.variance, b);
  for (const std::vector<T>& x : steps) {
    const std::vector<T> xb = extract(x, shape, b);
    std::vector<double> mean(bc), var(bc);
    reference::batch_norm_stats(b.extent, xb.data(), mean.data(), var.data());
    reference::batch_norm_update_running(bc, bc > 0 ? b.volume() / bc : 0,
                                         mean.data(), var.data(), momentum,
                                         rm.data(), rv.data());
  }
  place(rm, b, r.mean);
  place(rv, b, r.variance);
  return r;
}

// Two training steps (x1, then x2 with backward), then inference forward
// and backward on x3, on `grid`; everything checked against the reference.
template <typename T>
void ExpectMatchesReference(const Shape& shape, const ProcessGrid& grid,
                            BatchNormStats stats, double tol) {
  const Index c = shape[1], n = shape.volume();
  const auto x1 = random_values<T>(n, 1, 3.0);
  const auto x2 = random_values<T>(n, 2, -2.0);
  const auto x3 = random_values<T>(n, 3, 0.5);
  const auto dy = random_vector<T>(n, 4), scale = random_values<T>(c, 5, 1.0);
  const auto shift = random_vector<T>(c, 6);
  BatchNormOptions options;
  options.stats = stats;
  options.momentum = 0.25;
  options.epsilon = 1e-3;
  const Distribution dist(shape, grid.shape());
  BatchNorm<T> bn(grid, dist, options);
  SCOPED_TRACE(bn.describe());
  DistTensor<T> xt(grid, bn.src_layout()), yt(grid, bn.dst_layout());
  DistTensor<T> dyt(grid, bn.diff_dst_layout()),
      dxt(grid, bn.diff_src_layout());
  // Garbage in the outputs must not survive.
  yt.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  dxt.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  std::vector<T> ds(c, T(1e6)), db(c, T(1e6));
  scatter(x1.data(), xt, 0);
  bn.forward(xt, scale.data(), shift.data(), yt);
  scatter(x2.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  bn.forward(xt, scale.data(), shift.data(), yt);
  bn.backward(xt, dyt, scale.data(), dxt, ds.data(), db.data());

  const int rank = grid.rank();
  std::vector<T> y(n), dx(n);
  gather(yt, y.data(), 0);
  gather(dxt, dx.data(), 0);
  const Expected<T> e = expected_training(dist, stats, rank, x2, dy, scale,
                                          shift, options.epsilon);
  if (rank == 0) {
    EXPECT_LE(relative_error(y, e.y), tol) << "training forward";
    EXPECT_LE(relative_error(dx, e.dx), tol) << "training backward";
  }
  EXPECT_LE(relative_error(ds, e.diff_scale), tol) << "diff_scale";
  EXPECT_LE(relative_error(db, e.diff_shift), tol) << "diff_shift";
  EXPECT_LE(max_abs_error(bn.batch_mean(), e.mean), 1e-10) << "batch mean";
  EXPECT_LE(max_abs_error(bn.batch_variance(), e.variance), 1e-10)
      << "batch variance";
  const Box mine = my_block(dist, stats, rank);
  const Running r = running_after<T>(shape, mine, {x1, x2}, options.momentum);
  EXPECT_LE(max_abs_error(bn.running_mean(), r.mean), 1e-10) << "running mean";
  EXPECT_LE(max_abs_error(bn.running_variance(), r.variance), 1e-10)
      << "running variance";

  // Inference: the running statistics, which no longer change.
  bn.set_mode(BatchNormMode::kInference);
  scatter(x3.data(), xt, 0);
  for (int repeat = 0; repeat < 2; ++repeat) {
    bn.forward(xt, scale.data(), shift.data(), yt);
    bn.backward(xt, dyt, scale.data(), dxt, ds.data(), db.data());
  }
  gather(yt, y.data(), 0);
  gather(dxt, dx.data(), 0);
  const Expected<T> ei =
      expected_inference(dist, stats, rank, x3, dy, scale, shift,
                         options.epsilon, [&](const Box& b) {
                           const Running rb = running_after<T>(
                               shape, b, {x1, x2}, options.momentum);
                           return std::make_pair(rb.mean, rb.variance);
                         });
  if (rank == 0) {
    EXPECT_LE(relative_error(y, ei.y), tol) << "inference forward";
    EXPECT_LE(relative_error(dx, ei.dx), tol) << "inference backward";
  }
  EXPECT_LE(relative_error(ds, ei.diff_scale), tol) << "inference diff_scale";
  EXPECT_LE(relative_error(db, ei.diff_shift), tol) << "inference diff_shift";
  EXPECT_LE(max_abs_error(bn.running_mean(), r.mean), 1e-10)
      << "inference moved the running mean";
}

template <typename T>
void ForEveryCaseScopeAndGrid(double tol) {
  for (const BnCase& c : cases()) {
    for (const Shape& g : every_grid(c.shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, g);
      for (BatchNormStats stats : kAllStats) {
        SCOPED_TRACE(c.name + " " + c.shape.to_string() + " on grid " +
                     g.to_string() + ", " + to_string(stats) + " statistics");
        ExpectMatchesReference<T>(c.shape, grid, stats, tol);
        if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure()) !=
            0) {
          return;
        }
      }
    }
  }
}

TEST(BatchNorm, DoubleMatchesTheReferenceOnEveryGridAndScope) {
  ForEveryCaseScopeAndGrid<double>(1e-12);
}

TEST(BatchNorm, FloatMatchesTheReferenceOnEveryGridAndScope) {
  ForEveryCaseScopeAndGrid<float>(1e-5);
}

// 1e4 + noise in [-1, 1) on a 2x3x256x256 float image: E[x^2] - E[x]^2 in
// float is off by more than the variance itself; the layer's two-pass
// double statistics agree with the reference (double, two-pass on the
// same float values; the two differ in summation order only) to 1e-10
// relative, and its outputs to float precision.
TEST(BatchNorm, StatisticsAreStableOnLargeOffsets) {
  const Shape shape{2, 3, 256, 256};
  const Index n = shape.volume(), c = shape[1];
  const auto x = random_values<float>(n, 11, 1e4);
  const std::vector<float> scale = {1.0f, 2.0f, 0.5f};
  const std::vector<float> shift = {0.0f, 1.0f, -1.0f};
  std::vector<double> ref_mean(c), ref_var(c);
  reference::batch_norm_stats(shape, x.data(), ref_mean.data(), ref_var.data());
  std::vector<float> y_ref(n);
  reference::batch_norm_fwd_training(shape, x.data(), scale.data(),
                                     shift.data(), 1e-5, y_ref.data());
  // The naive formula in float, sequential sums.
  const Index per_channel = n / c;
  double worst_naive = 0;
  for (Index ch = 0; ch < c; ++ch) {
    float sum = 0, squares = 0;
    for (Index i = 0; i < per_channel; ++i) {
      const Index s = i / (256 * 256), p = i % (256 * 256);
      const float v = x[(s * c + ch) * 256 * 256 + p];
      sum += v;
      squares += v * v;
    }
    const float mean = sum / float(per_channel);
    const float naive = squares / float(per_channel) - mean * mean;
    worst_naive = std::max(worst_naive,
                           std::abs(double(naive) - ref_var[ch]) / ref_var[ch]);
  }
  EXPECT_GT(worst_naive, 0.5) << "the naive formula should fail here";

  for (const Shape& g : {spatial_grid(4), Shape{world_size(), 1, 1, 1}}) {
    ProcessGrid grid(MPI_COMM_WORLD, g);
    SCOPED_TRACE("grid " + g.to_string());
    BatchNormOptions options;
    options.momentum = 1.0;  // the running statistics are the batch's
    BatchNorm<float> bn(grid, Distribution(shape, grid.shape()), options);
    DistTensor<float> xt(grid, bn.src_layout()), yt(grid, bn.dst_layout());
    scatter(x.data(), xt, 0);
    bn.forward(xt, scale.data(), shift.data(), yt);
    const Index count = n / c;
    for (Index ch = 0; ch < c; ++ch) {
      EXPECT_NEAR(bn.batch_mean()[ch], ref_mean[ch], 1e-12 * 1e4);
      EXPECT_NEAR(bn.batch_variance()[ch], ref_var[ch], 1e-10 * ref_var[ch]);
      EXPECT_NEAR(bn.running_variance()[ch],
                  ref_var[ch] * double(count) / double(count - 1),
                  1e-10 * ref_var[ch]);
    }
    std::vector<float> y(n);
    gather(yt, y.data(), 0);
    if (grid.rank() == 0) {
      // |y| is up to ~3.5: float's own rounding, nothing more.
      EXPECT_LE(relative_error(y, y_ref), 1e-6);
    }
  }
}

// backward() is the adjoint of forward's derivative, in every scope: for a
// direction v of x and directions of scale and shift, the central
// difference of <forward(x), w> equals <v, diff_src> + <scale_dir,
// diff_scale> + <shift_dir, diff_shift> for backward(w), where diff_scale
// and diff_shift are summed over the statistics sets as the layer documents
// (over grid.along(0) for kSampleBlock, over all ranks for kShard).
TEST(BatchNorm, BackwardIsTheAdjointOfForwardsDerivative) {
  const Shape shape{4, 4, 6, 5};
  const Index n = shape.volume(), c = shape[1];
  const auto x = random_values<double>(n, 41, 1.5);
  const auto v = random_vector<double>(n, 42);
  const auto w = random_vector<double>(n, 43);
  const auto scale = random_values<double>(c, 44, 1.0);
  const auto shift = random_vector<double>(c, 45);
  const auto scale_dir = random_vector<double>(c, 46);
  const auto shift_dir = random_vector<double>(c, 47);
  const double h = 1e-5;
  const std::vector<Shape> grids = grids_without_channel_split(4);
  for (const Shape& g : {grids.front(), grids.back(), channel_grid(4)}) {
    ProcessGrid grid(MPI_COMM_WORLD, g);
    for (BatchNormStats stats : kAllStats) {
      SCOPED_TRACE("grid " + g.to_string() + ", " + to_string(stats));
      BatchNormOptions o;
      o.stats = stats;
      BatchNorm<double> bn(grid, Distribution(shape, grid.shape()), o);
      DistTensor<double> xt(grid, bn.src_layout()), yt(grid, bn.dst_layout());
      DistTensor<double> vt(grid, bn.src_layout()), wt(grid, bn.src_layout());
      DistTensor<double> dxt(grid, bn.src_layout());
      scatter(v.data(), vt, 0);
      scatter(w.data(), wt, 0);
      // <forward at x + t v, scale + t scale_dir, ...), w>.
      auto value_at = [&](double t) {
        std::vector<double> xs(n), s(c), b(c);
        for (Index i = 0; i < n; ++i) xs[i] = x[i] + t * v[i];
        for (Index i = 0; i < c; ++i) {
          s[i] = scale[i] + t * scale_dir[i];
          b[i] = shift[i] + t * shift_dir[i];
        }
        scatter(xs.data(), xt, 0);
        bn.forward(xt, s.data(), b.data(), yt);
        return testing::global_dot(yt, wt);
      };
      const double lhs = (value_at(h) - value_at(-h)) / (2 * h);
      scatter(x.data(), xt, 0);
      bn.forward(xt, scale.data(), shift.data(), yt);
      std::vector<double> ds(c), db(c);
      bn.backward(xt, wt, scale.data(), dxt, ds.data(), db.data());
      // The sets' partial sums into the whole gradient.
      MPI_Comm across = MPI_COMM_NULL;
      if (stats == BatchNormStats::kSampleBlock) across = grid.along(0);
      if (stats == BatchNormStats::kShard) across = grid.comm();
      if (across != MPI_COMM_NULL) {
        MPI_Allreduce(MPI_IN_PLACE, ds.data(), int(c), MPI_DOUBLE, MPI_SUM,
                      across);
        MPI_Allreduce(MPI_IN_PLACE, db.data(), int(c), MPI_DOUBLE, MPI_SUM,
                      across);
      }
      double rhs = testing::global_dot(vt, dxt);
      for (Index i = 0; i < c; ++i) {
        rhs += scale_dir[i] * ds[i] + shift_dir[i] * db[i];
      }
      EXPECT_NEAR(lhs, rhs, 1e-7 * std::max(1.0, std::abs(rhs)));
    }
  }
}

// dst may be src, and diff_src may be diff_dst or src.
TEST(BatchNorm, InPlace) {
  const Shape shape{2, 5, 6, 7};
  const Index n = shape.volume();
  ProcessGrid grid(MPI_COMM_WORLD, spatial_grid(4));
  const auto x = random_values<double>(n, 21, 1.0);
  const auto dy = random_vector<double>(n, 22);
  const auto scale = random_values<double>(5, 23, 1.0);
  const auto shift = random_vector<double>(5, 24);
  BatchNorm<double> bn(grid, Distribution(shape, grid.shape()));
  DistTensor<double> xt(grid, bn.src_layout()), yt(grid, bn.dst_layout());
  DistTensor<double> dyt(grid, bn.diff_dst_layout());
  DistTensor<double> dxt(grid, bn.diff_src_layout());
  std::vector<double> ds(5), db(5), ds2(5), db2(5);
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  bn.forward(xt, scale.data(), shift.data(), yt);
  bn.backward(xt, dyt, scale.data(), dxt, ds.data(), db.data());
  std::vector<double> y(n), dx(n), got(n);
  gather(yt, y.data(), 0);
  gather(dxt, dx.data(), 0);
  // diff_src in place of diff_dst.
  bn.backward(xt, dyt, scale.data(), dyt, ds2.data(), db2.data());
  gather(dyt, got.data(), 0);
  if (grid.rank() == 0) {
    EXPECT_EQ(got, dx);
  }
  EXPECT_EQ(ds2, ds);
  EXPECT_EQ(db2, db);
  // diff_src in place of src (after forward, from a copy of x).
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  bn.backward(xt, dyt, scale.data(), xt, ds2.data(), db2.data());
  gather(xt, got.data(), 0);
  if (grid.rank() == 0) {
    EXPECT_EQ(got, dx);
  }
  // dst in place of src.
  scatter(x.data(), xt, 0);
  bn.forward(xt, scale.data(), shift.data(), xt);
  gather(xt, got.data(), 0);
  if (grid.rank() == 0) {
    EXPECT_EQ(got, y);
  }
}

// Shard statistics and inference forward talk to no other rank: here only
// rank 0 runs them.
TEST(BatchNorm, ShardStatisticsAndInferenceForwardNeedNoCommunication) {
  const Shape shape{world_size(), 3, 4, 4};
  ProcessGrid grid(MPI_COMM_WORLD, Shape{world_size(), 1, 1, 1});
  const Index n = shape.volume();
  const auto x = random_values<double>(n, 31, 2.0);
  const auto dy = random_vector<double>(n, 32);
  const std::vector<double> scale = {1, 2, 3}, shift = {0, 0, 1};
  BatchNormOptions shard;
  shard.stats = BatchNormStats::kShard;
  BatchNorm<double> local(grid, Distribution(shape, grid.shape()), shard);
  BatchNormOptions infer;
  infer.mode = BatchNormMode::kInference;
  BatchNorm<double> global(grid, Distribution(shape, grid.shape()), infer);
  DistTensor<double> xt(grid, local.src_layout()), yt(grid, local.dst_layout());
  DistTensor<double> dyt(grid, local.src_layout()),
      dxt(grid, local.src_layout());
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  if (grid.rank() != 0) return;
  std::vector<double> ds(3), db(3);
  local.forward(xt, scale.data(), shift.data(), yt);
  local.backward(xt, dyt, scale.data(), dxt, ds.data(), db.data());
  // Sample 0 alone, as the reference computes it.
  const Shape one{1, 3, 4, 4};
  std::vector<double> y(48), dx(48), ds_ref(3), db_ref(3);
  reference::batch_norm_fwd_training(one, x.data(), scale.data(), shift.data(),
                                     1e-5, y.data());
  reference::batch_norm_bwd_training(one, x.data(), dy.data(), scale.data(),
                                     1e-5, dx.data(), ds_ref.data(),
                                     db_ref.data());
  std::vector<double> got(48);
  std::copy(yt.data(), yt.data() + 48, got.begin());  // channels-last
  std::vector<double> got_nchw(48);
  for (int p = 0; p < 16; ++p) {
    for (int ch = 0; ch < 3; ++ch) got_nchw[ch * 16 + p] = got[p * 3 + ch];
  }
  EXPECT_LE(relative_error(got_nchw, y), 1e-12);
  EXPECT_LE(relative_error(ds, ds_ref), 1e-12);
  EXPECT_LE(relative_error(db, db_ref), 1e-12);
  global.forward(xt, scale.data(), shift.data(), yt);  // mean 0, variance 1
  EXPECT_NEAR(yt.data()[0], x[0] / std::sqrt(1 + 1e-5), 1e-12);
}

// A layer over a tensor with no samples, and one with no channels: nothing
// to compute, nothing divides by zero, the running statistics stay.
TEST(BatchNorm, EmptyTensors) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  for (const Shape& shape : {Shape{0, 3, 4, 4}, Shape{2, 0, 4, 4}}) {
    SCOPED_TRACE(shape.to_string());
    for (BatchNormStats stats : kAllStats) {
      BatchNormOptions o;
      o.stats = stats;
      BatchNorm<float> bn(grid, Distribution(shape, grid.shape()), o);
      DistTensor<float> x(grid, bn.src_layout()), y(grid, bn.dst_layout());
      const std::vector<float> scale(3, 1.0f), shift(3, 0.0f);
      std::vector<float> ds(3, 7.0f), db(3, 7.0f);
      bn.forward(x, scale.data(), shift.data(), y);
      bn.backward(x, y, scale.data(), y, ds.data(), db.data());
      EXPECT_EQ(bn.running_mean(), std::vector<double>(shape[1], 0.0));
      EXPECT_EQ(bn.running_variance(), std::vector<double>(shape[1], 1.0));
      if (shape[1] > 0) {
        EXPECT_EQ(ds, std::vector<float>(3, 0.0f));
        EXPECT_EQ(db, std::vector<float>(3, 0.0f));
      }
    }
  }
}

TEST(BatchNorm, RunningStatisticsCanBeSet) {
  ProcessGrid grid(MPI_COMM_WORLD, spatial_grid(4));
  const Shape shape{2, 2, 3, 4};
  BatchNormOptions o;
  o.mode = BatchNormMode::kInference;
  o.epsilon = 0;
  BatchNorm<double> bn(grid, Distribution(shape, grid.shape()), o);
  const std::vector<double> mean = {1, -1}, var = {4, 0.25};
  bn.set_running_stats(mean.data(), var.data());
  EXPECT_EQ(bn.running_mean(), mean);
  EXPECT_EQ(bn.running_variance(), var);
  DistTensor<double> x(grid, bn.src_layout()), y(grid, bn.dst_layout());
  x.interior().for_each([](const Shape& i, double& v) { v = i[1] ? 0 : 3; });
  const std::vector<double> scale = {1, 1}, shift = {0, 0};
  bn.forward(x, scale.data(), shift.data(), y);
  // (3 - 1) / 2 = 1 and (0 + 1) / 0.5 = 2.
  y.interior().for_each(
      [](const Shape& i, const double& v) { EXPECT_EQ(v, i[1] ? 2.0 : 1.0); });
}

TEST(BatchNorm, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  const Distribution dist(Shape{2, 4, 4 * n, 4}, grid.shape());
  auto with = [](auto edit) {
    BatchNormOptions o;
    edit(o);
    return o;
  };
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        BatchNorm<float>(
            grid, Distribution(Shape{2, 4, 8, 8}, Shape{1, 1, 1, n + 1}));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "epsilon -1", [&] {
        BatchNorm<float>(grid, dist,
                         with([](BatchNormOptions& o) { o.epsilon = -1; }));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "epsilon", [&] {
        BatchNorm<float>(grid, dist, with([](BatchNormOptions& o) {
                           o.epsilon = std::numeric_limits<double>::quiet_NaN();
                         }));
      });
  for (double m : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kInvalidArgument, "must be in [0, 1]", [&] {
          BatchNorm<double>(grid, dist,
                            with([&](BatchNormOptions& o) { o.momentum = m; }));
        });
  }
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "unknown BatchNormStats", [&] {
        BatchNorm<float>(grid, dist, with([](BatchNormOptions& o) {
                           o.stats = static_cast<BatchNormStats>(7);
                         }));
      });
  {
    ProcessGrid plane(comm, Shape{n, 1});
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kInvalidArgument, "with 1 to 3 spatial dimensions",
        [&] {
          BatchNorm<float>(plane, Distribution(Shape{4, 2}, plane.shape()));
        });
  }
  BatchNorm<float> bn(grid, dist);
  DistTensor<float> x(grid, bn.src_layout()), y(grid, bn.dst_layout());
  DistTensor<float> dx(grid, bn.diff_src_layout());
  std::vector<float> scale(4, 1.0f), shift(4, 0.0f), ds(4), db(4);
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kState, "needs a forward first",
      [&] { bn.backward(x, y, scale.data(), dx, ds.data(), db.data()); });
  DistTensor<float> channels_first(grid, HaloLayout(dist));
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "src tensor's layout",
      [&] { bn.forward(channels_first, scale.data(), shift.data(), y); });
  // The same layout built again, not taken from the plan, is fine.
  DistTensor<float> same(
      grid, HaloLayout(dist).with_storage(StorageOrder::kChannelsLast));
  DistTensor<float> bigger(
      grid, HaloLayout(Distribution(Shape{3, 4, 4 * n, 4}, grid.shape()))
                .with_storage(StorageOrder::kChannelsLast));
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "dst tensor's layout",
      [&] { bn.forward(x, scale.data(), shift.data(), bigger); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "scale is null",
      [&] { bn.forward(x, nullptr, shift.data(), y); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "unknown BatchNormMode",
      [&] { bn.set_mode(static_cast<BatchNormMode>(3)); });
  bn.forward(x, scale.data(), shift.data(), same);  // still usable
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "diff_shift is null",
      [&] { bn.backward(x, y, scale.data(), dx, ds.data(), nullptr); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "diff_dst tensor's layout", [&] {
        bn.backward(x, channels_first, scale.data(), dx, ds.data(), db.data());
      });
  bn.backward(x, y, scale.data(), dx, ds.data(), db.data());
  BatchNorm<float> moved = std::move(bn);
  testing::expect_error_on_all_ranks(comm, ErrorKind::kState, "moved from",
                                     [&] { bn.channels(); });
  EXPECT_EQ(moved.channels(), 4);
}

}  // namespace
}  // namespace distconv
