// The distributed softmax and log-softmax against the reference kernels on
// the gathered global tensors, on every grid the rank count factors into
// (channels whole), in the plan's layouts and in layouts with halos of
// either storage order; in place; bad input.
#include "layers/softmax.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/reference/softmax.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::grids_without_channel_split;
using testing::world_size;

struct SoftmaxCase {
  std::string name;
  Shape shape;
  double shift;  // added to every logit: large ones need the max subtracted
};

std::vector<SoftmaxCase> cases() {
  return {
      {"2d", {2, 5, 7, 6}, 0},
      {"2d_one_channel", {3, 1, 5, 4}, 0},
      {"2d_large_logits", {1, 4, 9, 5}, 500},
      {"3d", {2, 3, 5, 3, 4}, 0},
      {"3d_more_ranks_than_rows", {1, 6, 2, 3, 2}, -300},
  };
}

// A layout with halos of another layer (a 3x3 convolution's), stored
// channels-first: the passes must act on shard interiors only.
HaloLayout foreign_layout(const Distribution& dist) {
  Shape widths = Shape::filled(dist.ndims(), 1);
  widths[0] = widths[1] = 0;
  return HaloLayout(dist, HaloWidths::symmetric(widths));
}

constexpr double kSentinel = 1e6;

// max |got - want| over max(1, max |want|): relative where outputs are
// large, absolute where they are all small (a one-channel log-softmax is
// exactly 0, which oneDNN's fp32 gets to within 1e-6).
template <typename T>
double max_error(const std::vector<T>& got, const std::vector<T>& want) {
  std::vector<T> padded = want;
  padded.push_back(T(1));
  std::vector<T> got_padded = got;
  got_padded.push_back(T(1));
  return max_relative_error(got_padded, padded);
}

// Every buffer cell outside the shard still holds kSentinel.
template <typename T>
bool halos_untouched(const DistTensor<T>& t) {
  const Box inside = t.layout().interior(t.part());
  bool ok = true;
  t.buffer().for_each([&](const Shape& i, const T& v) {
    if (!inside.contains(i) && v != T(kSentinel)) {
      ok = false;
    }
  });
  return ok;
}

// Forward and backward on `grid` (twice: plans are reusable) with the
// given layouts for x/dy and y/dx; compares the gathered results with the
// reference on rank 0.
template <typename T>
void ExpectMatchesReference(const SoftmaxCase& c, SoftmaxKind kind,
                            const ProcessGrid& grid, bool foreign, double tol) {
  const Distribution dist(c.shape, grid.shape());
  Softmax<T> softmax(grid, dist, {kind});
  SCOPED_TRACE(softmax.describe());
  const HaloLayout in = foreign ? foreign_layout(dist) : softmax.src_layout();
  const HaloLayout out =
      foreign ? foreign_layout(dist).with_storage(StorageOrder::kChannelsLast)
              : softmax.dst_layout();
  auto x = random_vector<T>(c.shape.volume(), 1);
  for (T& v : x) v = T(4 * v + c.shift);
  const auto dy = random_vector<T>(c.shape.volume(), 2);
  DistTensor<T> xt(grid, in), dyt(grid, in), yt(grid, out), dxt(grid, out);
  for (DistTensor<T>* t : {&xt, &dyt, &yt, &dxt}) {
    t->buffer().for_each([](const Shape&, T& v) { v = T(kSentinel); });
  }
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  for (int repeat = 0; repeat < 2; ++repeat) {
    softmax.forward(xt, yt);
    softmax.backward(yt, dyt, dxt);
  }
  EXPECT_TRUE(halos_untouched(yt) && halos_untouched(dxt))
      << "rank " << grid.rank() << " wrote outside its shard";
  std::vector<T> y(x.size()), dx(x.size());
  gather(yt, y.data(), 0);
  gather(dxt, dx.data(), 0);
  if (grid.rank() != 0) return;
  std::vector<T> y_ref(x.size()), dx_ref(x.size());
  reference::softmax_fwd<T>(kind, c.shape, x.data(), y_ref.data());
  reference::softmax_bwd<T>(kind, c.shape, y_ref.data(), dy.data(),
                            dx_ref.data());
  EXPECT_LE(max_error(y, y_ref), tol) << "forward";
  EXPECT_LE(max_error(dx, dx_ref), tol) << "backward";
}

template <typename T>
void ForEveryCaseAndGrid(double tol) {
  for (int ndims : {4, 5}) {
    for (const Shape& shape : grids_without_channel_split(ndims)) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);  // one per grid: collective
      for (const SoftmaxCase& c : cases()) {
        if (c.shape.ndims() != ndims) continue;
        for (SoftmaxKind kind :
             {SoftmaxKind::kSoftmax, SoftmaxKind::kLogSoftmax}) {
          for (bool foreign : {false, true}) {
            SCOPED_TRACE(c.name + " " + to_string(kind) + " on grid " +
                         shape.to_string() +
                         (foreign ? " (layouts with halos)" : ""));
            ExpectMatchesReference<T>(c, kind, grid, foreign, tol);
            if (testing::max_over(MPI_COMM_WORLD,
                                  ::testing::Test::HasFailure()) != 0) {
              return;
            }
          }
        }
      }
    }
  }
}

TEST(Softmax, DoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>(1e-12);
}

TEST(Softmax, FloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>(1e-5);
}

// forward(x, x) and backward(y, dy, dy), in the plan's layouts (for fp32,
// oneDNN's path) and in layouts with halos (the loops).
template <typename T>
void ExpectInPlaceWorks(bool halos, double tol) {
  const Shape shape{2, 4, 6, 5};
  ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(4));
  for (SoftmaxKind kind : {SoftmaxKind::kSoftmax, SoftmaxKind::kLogSoftmax}) {
    SCOPED_TRACE(std::string(to_string(kind)) + (halos ? " with halos" : ""));
    const Distribution dist(shape, grid.shape());
    Softmax<T> softmax(grid, dist, {kind});
    const HaloLayout layout =
        halos ? foreign_layout(dist) : softmax.src_layout();
    const auto x = random_vector<T>(shape.volume(), 3);
    const auto dy = random_vector<T>(shape.volume(), 4);
    DistTensor<T> t(grid, layout), y(grid, layout), d(grid, layout);
    scatter(x.data(), t, 0);
    scatter(dy.data(), d, 0);
    softmax.forward(t, t);
    softmax.forward(t, y);  // y = softmax(softmax(x)): t must have changed
    softmax.backward(t, d, d);
    std::vector<T> got(x.size()), dx(x.size());
    gather(t, got.data(), 0);
    gather(d, dx.data(), 0);
    if (grid.rank() != 0) continue;
    std::vector<T> want(x.size()), dx_ref(x.size());
    reference::softmax_fwd(kind, shape, x.data(), want.data());
    reference::softmax_bwd(kind, shape, want.data(), dy.data(), dx_ref.data());
    EXPECT_LE(max_error(got, want), tol);
    EXPECT_LE(max_error(dx, dx_ref), tol);
  }
}

TEST(Softmax, InPlace) {
  for (bool halos : {false, true}) {
    ExpectInPlaceWorks<double>(halos, 1e-13);
    ExpectInPlaceWorks<float>(halos, 1e-5);
  }
}

TEST(Softmax, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Softmax<float>(grid,
                       Distribution(Shape{1, 4, 8, 8}, Shape{1, 1, 1, n + 1}));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "at least one channel", [&] {
        Softmax<float>(grid, Distribution(Shape{1, 0, 8, 8}, grid.shape()));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "must be >= 0", [&] {
        Softmax<float>(grid, Distribution(Shape{-1, 4, 8, 8}, grid.shape()));
      });
  if (n > 1) {
    ProcessGrid channels(comm, Shape{1, n, 1, 1});
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kUnsupported, "splits channels", [&] {
          Softmax<float>(channels,
                         Distribution(Shape{1, 4, 8, 8}, channels.shape()));
        });
  }
  Softmax<float> s(grid, Distribution(Shape{1, 4, 2 * n, 8}, grid.shape()));
  DistTensor<float> x(grid, s.src_layout()), y(grid, s.dst_layout());
  DistTensor<float> other(
      grid, HaloLayout(Distribution(Shape{1, 4, 2 * n, 9}, grid.shape())));
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "dst tensor's distribution",
                                     [&] { s.forward(x, other); });
  testing::expect_error_on_all_ranks(comm, ErrorKind::kShapeMismatch,
                                     "diff_src tensor's distribution",
                                     [&] { s.backward(y, x, other); });
  s.forward(x, y);  // still usable
  s.backward(y, x, x);
}

}  // namespace
}  // namespace distconv
