// The distributed losses against the reference kernels: the total (the
// same on every rank), each rank's per-sample losses and the gathered
// gradients, on every grid the rank count factors into (channels whole),
// with a sample split over every rank and empty shards, in layouts with
// halos; data-dependent and other bad input.
#include "layers/loss.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/reference/loss.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::grids_without_channel_split;
using testing::world_size;

constexpr LossKind kIndices = LossKind::kCrossEntropyIndices;
constexpr LossKind kProbabilities = LossKind::kCrossEntropyProbabilities;
constexpr LossKind kMse = LossKind::kMeanSquaredError;
constexpr LossReduction kMean = LossReduction::kMean;
constexpr LossReduction kSum = LossReduction::kSum;

struct LossCase {
  std::string name;
  LossDesc desc;
  Shape shape;  // of the prediction
};

LossDesc loss(LossKind kind, LossReduction r,
              std::optional<std::int64_t> ignore = std::nullopt) {
  LossDesc d = LossDesc::make(kind, r);
  d.ignore_index = ignore;
  return d;
}

std::vector<LossCase> cases() {
  return {
      {"ce_indices_mean", loss(kIndices, kMean), {3, 5, 7, 6}},
      {"ce_indices_sum_ignore", loss(kIndices, kSum, 1), {2, 4, 5, 9}},
      {"ce_indices_mean_ignore_3d",
       loss(kIndices, kMean, 255),
       {2, 3, 4, 5, 3}},
      {"ce_probabilities_mean", loss(kProbabilities, kMean), {2, 6, 5, 7}},
      {"ce_probabilities_sum_3d", loss(kProbabilities, kSum), {3, 3, 3, 4, 5}},
      {"mse_mean", loss(kMse, kMean), {3, 4, 6, 5}},
      {"mse_sum_3d", loss(kMse, kSum), {2, 2, 5, 3, 4}},
      {"mse_mean_3d_one_channel", loss(kMse, kMean), {1, 1, 6, 2, 5}},
  };
}

// The inputs of a case, the same on every rank (so each can run the
// reference): logits spread over [-3, 3), targets per kind.
template <typename T>
struct Inputs {
  std::vector<T> x, target;           // value targets
  std::vector<std::int64_t> indices;  // class targets, some ignored
};

template <typename T>
Inputs<T> inputs(const LossDesc& d, const Shape& shape) {
  Inputs<T> in;
  in.x = random_vector<T>(shape.volume(), 11);
  for (T& v : in.x) v *= 3;
  if (d.takes_indices()) {
    std::mt19937_64 rng(12);
    in.indices.resize(d.target_shape(shape).volume());
    for (std::int64_t& k : in.indices) {
      k = static_cast<std::int64_t>(rng() % shape[1]);
      if (d.ignore_index && rng() % 4 == 0) k = *d.ignore_index;
    }
  } else {
    in.target = random_vector<T>(shape.volume(), 13);
    if (d.kind == kProbabilities) {
      for (T& v : in.target) v = std::abs(v);
    }
  }
  return in;
}

double relative(double got, double want) {
  return std::abs(got - want) / std::max(std::abs(want), 1e-300);
}

// A layout with a 3x3 convolution's halos, in either storage order.
HaloLayout with_halos(const HaloLayout& layout, StorageOrder order) {
  Shape w = Shape::filled(layout.ndims(), 1);
  w[0] = w[1] = 0;
  return HaloLayout(layout.distribution(), HaloWidths::symmetric(w))
      .with_storage(order);
}

// Whether two tensors of one layout hold the same bits, halos included.
template <typename T>
bool same_buffers(const DistTensor<T>& a, const DistTensor<T>& b) {
  bool same = true;
  const StridedView<const T> other = b.buffer();
  a.buffer().for_each([&](const Shape& i, const T& v) {
    same = same && std::memcmp(&v, &other(i), sizeof(T)) == 0;
  });
  return same;
}

// Forward and backward on `grid`, twice (plans are reusable), in the
// plan's layouts or in layouts with halos; the total on every rank, its
// per-sample losses, and the gathered gradient on rank 0 must match the
// reference.
template <typename T>
void ExpectMatchesReference(const LossCase& c, const ProcessGrid& grid,
                            bool halos, double tol) {
  const Inputs<T> in = inputs<T>(c.desc, c.shape);
  Loss<T> l(grid, c.desc, Distribution(c.shape, grid.shape()));
  SCOPED_TRACE(l.describe());
  const HaloLayout xl =
      halos ? with_halos(l.prediction_layout(), StorageOrder::kChannelsFirst)
            : l.prediction_layout();
  const HaloLayout tl =
      halos ? with_halos(l.target_layout(), StorageOrder::kChannelsLast)
            : l.target_layout();
  const HaloLayout dl = halos ? with_halos(l.diff_prediction_layout(),
                                           StorageOrder::kChannelsLast)
                              : l.diff_prediction_layout();
  DistTensor<T> xt(grid, xl), dxt(grid, dl);
  DistTensor<T> tt(grid, c.desc.takes_indices() ? xl : tl);  // unused there
  DistTensor<std::int64_t> it(grid, tl);
  scatter(in.x.data(), xt, 0);
  if (c.desc.takes_indices()) {
    scatter(in.indices.data(), it, 0);
  } else {
    scatter(in.target.data(), tt, 0);
  }
  dxt.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  double total = 0;
  for (int repeat = 0; repeat < 2; ++repeat) {
    if (c.desc.takes_indices()) {
      total = l.forward(xt, it);
      l.backward(xt, it, dxt);
    } else {
      total = l.forward(xt, tt);
      l.backward(xt, tt, dxt);
    }
  }
  std::vector<T> dx(c.shape.volume());
  gather(dxt, dx.data(), 0);

  // forward_backward (the same layer again): the same total, sample losses
  // and gradient bit for bit, the gradient's halos untouched.
  const std::vector<double> separate = l.sample_losses();
  DistTensor<T> fused(grid, dl);
  fused.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  const double fused_total = c.desc.takes_indices()
                                 ? l.forward_backward(xt, it, fused)
                                 : l.forward_backward(xt, tt, fused);
  EXPECT_EQ(fused_total, total) << "forward_backward's total";
  EXPECT_EQ(l.sample_losses(), separate) << "forward_backward's samples";
  EXPECT_TRUE(same_buffers(fused, dxt))
      << "forward_backward's gradient on rank " << grid.rank();

  std::vector<double> per_ref(c.shape[0]);
  std::vector<T> dx_ref(dx.size());
  double want = 0;
  if (c.desc.takes_indices()) {
    want = reference::loss_fwd(c.desc, c.shape, in.x.data(), in.indices.data(),
                               per_ref.data());
    reference::loss_bwd(c.desc, c.shape, in.x.data(), in.indices.data(),
                        dx_ref.data());
  } else {
    want = reference::loss_fwd(c.desc, c.shape, in.x.data(), in.target.data(),
                               per_ref.data());
    reference::loss_bwd(c.desc, c.shape, in.x.data(), in.target.data(),
                        dx_ref.data());
  }
  // Reductions are in double: the total is as good for float inputs.
  EXPECT_LE(relative(total, want), 1e-12)
      << "total " << total << ", reference " << want;
  double lowest = 0, highest = 0;
  MPI_Allreduce(&total, &lowest, 1, MPI_DOUBLE, MPI_MIN, grid.comm());
  MPI_Allreduce(&total, &highest, 1, MPI_DOUBLE, MPI_MAX, grid.comm());
  EXPECT_EQ(lowest, highest) << "ranks disagree on the total";
  const Box shard = l.prediction_layout().shard(grid.rank());
  ASSERT_EQ(l.first_sample(), shard.lower[0]);
  ASSERT_EQ(Index(l.sample_losses().size()), shard.extent[0]);
  for (size_t i = 0; i < l.sample_losses().size(); ++i) {
    EXPECT_LE(relative(l.sample_losses()[i], per_ref[l.first_sample() + i]),
              1e-12)
        << "sample " << l.first_sample() + i << " on rank " << grid.rank();
  }
  if (grid.rank() == 0) {
    EXPECT_LE(max_relative_error(dx, dx_ref), tol) << "gradient";
  }
}

template <typename T>
void ForEveryCaseAndGrid(double tol) {
  for (int ndims : {4, 5}) {
    for (const Shape& shape : grids_without_channel_split(ndims)) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);  // one per grid: collective
      for (const LossCase& c : cases()) {
        if (c.shape.ndims() != ndims) continue;
        for (bool halos : {false, true}) {
          SCOPED_TRACE(c.name + " on grid " + shape.to_string() +
                       (halos ? " (layouts with halos)" : ""));
          ExpectMatchesReference<T>(c, grid, halos, tol);
          if (testing::max_over(MPI_COMM_WORLD,
                                ::testing::Test::HasFailure()) != 0) {
            return;
          }
        }
      }
    }
  }
}

TEST(Loss, DoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>(1e-12);
}

TEST(Loss, FloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>(1e-6);
}

// One sample split over every rank, with uneven and empty shards (1x3x5x2
// over n rows or columns), and more ranks than samples along N.
TEST(Loss, OneSampleOverEveryRankAndEmptyShards) {
  const int n = world_size();
  const std::vector<std::pair<Shape, Shape>> problems = {
      {{1, 3, 5, 2}, {1, 1, n, 1}},
      {{1, 3, 5, 2}, {1, 1, 1, n}},
      {{1, 3, 2, 3, 2}, {1, 1, 1, n, 1}},
      {{2, 3, 3, 2}, {n, 1, 1, 1}},
  };
  for (const auto& [shape, grid_shape] : problems) {
    ProcessGrid grid(MPI_COMM_WORLD, grid_shape);
    for (const LossDesc& d :
         {loss(kIndices, kMean), loss(kIndices, kSum, 0),
          loss(kProbabilities, kMean), loss(kMse, kMean), loss(kMse, kSum)}) {
      LossCase c{to_string(d.kind), d, shape};
      SCOPED_TRACE(c.name + " " + shape.to_string() + " on grid " +
                   grid_shape.to_string());
      ExpectMatchesReference<double>(c, grid, false, 1e-12);
      ExpectMatchesReference<float>(c, grid, true, 1e-6);
    }
  }
}

// Every cell ignored: loss 0 and gradient 0 (PyTorch gives NaN), with a
// sample on every rank.
TEST(Loss, EveryCellIgnored) {
  ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(4));
  const Shape shape{2, 3, 4, 4};
  const LossDesc d = loss(kIndices, kMean, 7);
  Loss<double> l(grid, d, Distribution(shape, grid.shape()));
  DistTensor<double> x(grid, l.prediction_layout());
  DistTensor<double> dx(grid, l.diff_prediction_layout());
  DistTensor<std::int64_t> t(grid, l.target_layout());
  t.interior().for_each([](const Shape&, std::int64_t& k) { k = 7; });
  dx.interior().for_each([](const Shape&, double& v) { v = 3; });
  EXPECT_EQ(l.forward(x, t), 0.0);
  for (double s : l.sample_losses()) EXPECT_EQ(s, 0.0);
  l.backward(x, t, dx);
  dx.interior().for_each([](const Shape&, double& v) { EXPECT_EQ(v, 0.0); });
  dx.interior().for_each([](const Shape&, double& v) { v = 3; });
  EXPECT_EQ(l.forward_backward(x, t, dx), 0.0);
  dx.interior().for_each([](const Shape&, double& v) { EXPECT_EQ(v, 0.0); });
}

TEST(Loss, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  const LossDesc ce = loss(kIndices, kMean);
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Loss<float>(grid, ce,
                    Distribution(Shape{1, 4, 8, 8}, Shape{1, 1, 1, n + 1}));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "at least one channel", [&] {
        Loss<float>(grid, ce, Distribution(Shape{1, 0, 8, 8}, grid.shape()));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "ignore_index applies to", [&] {
        Loss<float>(grid, loss(kMse, kMean, 0),
                    Distribution(Shape{1, 4, 8, 8}, grid.shape()));
      });
  if (n > 1) {
    ProcessGrid channels(comm, Shape{1, n, 1, 1});
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kUnsupported, "splits channels", [&] {
          Loss<float>(channels, ce,
                      Distribution(Shape{1, 4, 8, 8}, channels.shape()));
        });
  }

  // Class indices: 3 classes, H split over every rank.
  const Shape shape{1, 3, 2 * n, 4};
  Loss<float> l(grid, ce, Distribution(shape, grid.shape()));
  DistTensor<float> x(grid, l.prediction_layout());
  DistTensor<float> dx(grid, l.diff_prediction_layout());
  DistTensor<std::int64_t> t(grid, l.target_layout());
  // The wrong kind of target, or a target of another shape.
  testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                     "takes class indices",
                                     [&] { l.forward(x, x); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                     "forward_backward takes class indices",
                                     [&] { l.forward_backward(x, x, dx); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                     "takes class indices",
                                     [&] { l.backward(x, dx, dx); });
  DistTensor<std::int64_t> wide(
      grid, HaloLayout(Distribution(Shape{1, 1, 2 * n, 5}, grid.shape())));
  DistTensor<float> wide_dx(
      grid, HaloLayout(Distribution(Shape{1, 3, 2 * n, 5}, grid.shape())));
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "target tensor's distribution",
                                     [&] { l.forward(x, wide); });
  DistTensor<std::int64_t> channels_wide(
      grid, HaloLayout(Distribution(Shape{1, 3, 2 * n, 4}, grid.shape())));
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "target tensor's distribution",
                                     [&] { l.forward(x, channels_wide); });
  // An index out of range on the last rank only: data-dependent, found by
  // one rank, thrown by all.
  if (grid.rank() == n - 1) t.interior()({0, 0, 1, 2}) = 3;
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument,
      "the target holds 1 class indices outside [0, 3)",
      [&] { l.forward(x, t); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument,
      "the target holds 1 class indices outside [0, 3)",
      [&] { l.backward(x, t, dx); });
  // forward_backward throws before writing the gradient.
  dx.buffer().for_each([](const Shape&, float& v) { v = 5; });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument,
      "the target holds 1 class indices outside [0, 3)",
      [&] { l.forward_backward(x, t, dx); });
  dx.buffer().for_each([](const Shape&, float& v) { EXPECT_EQ(v, 5.0f); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "diff_prediction tensor's",
      [&] { l.forward_backward(x, t, wide_dx); });
  if (grid.rank() == n - 1) t.interior()({0, 0, 1, 2}) = -1;
  testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                     "outside [0, 3)",
                                     [&] { l.forward(x, t); });
  t.interior().for_each([](const Shape&, std::int64_t& k) { k = 2; });
  EXPECT_NEAR(l.forward(x, t), std::log(3.0), 1e-6);  // still usable
  l.backward(x, t, dx);

  // Value targets: a target of another distribution.
  Loss<double> mse(grid, loss(kMse, kMean),
                   Distribution(Shape{2, 3, n, 4}, grid.shape()));
  DistTensor<double> p(grid, mse.prediction_layout());
  DistTensor<double> uneven(
      grid, HaloLayout(Distribution(
                {BlockPartition::balanced(2, 1), BlockPartition::balanced(3, 1),
                 BlockPartition::from_sizes(std::vector<Index>(n, 1)),
                 BlockPartition::balanced(4, 1)})));
  DistTensor<double> other(
      grid, HaloLayout(Distribution(Shape{2, 3, n + 1, 4}, grid.shape())));
  EXPECT_EQ(mse.forward(p, uneven), 0.0);  // the same distribution
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "target tensor's distribution",
                                     [&] { mse.forward(p, other); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "diff_prediction tensor's",
                                     [&] { mse.backward(p, p, other); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kInvalidArgument,
                                     "takes a DistTensor",
                                     [&] { mse.forward(p, t); });
}

}  // namespace
}  // namespace distconv
