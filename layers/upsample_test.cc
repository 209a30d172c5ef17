// Distributed nearest-neighbour upsampling against the reference on the
// gathered global tensors, on every grid the rank count factors into
// (channel splits included: channels are independent); tensors with halos;
// the adjoint identity; bad input.
#include "layers/upsample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/shard_testing.h"
#include "kernels/reference/upsample.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::gathered;
using testing::world_size;

struct UpsampleCase {
  std::string name;
  UpsampleDesc desc;
  Shape src_shape;
};

std::vector<UpsampleCase> cases() {
  return {
      {"2d_2x3_odd_extents", {{2, 3}}, {2, 3, 5, 4}},
      {"2d_identity", {{1, 1}}, {1, 2, 3, 3}},
      {"2d_4x1", {{4, 1}}, {1, 2, 2, 5}},
      {"3d_2x1x2", {{2, 1, 2}}, {1, 2, 3, 4, 3}},
  };
}

// Forward and backward, run twice (plans are reusable); gathered results
// must equal the reference exactly (the same sums in the same order).
template <typename T>
void ExpectMatchesReference(const ProcessGrid& grid, const UpsampleCase& c) {
  SCOPED_TRACE(sizeof(T) == 8 ? "double" : "float");
  const Upsample<T> up(grid, c.desc, Distribution(c.src_shape, grid.shape()));
  const Shape dst_shape = up.dst_distribution().global_shape();
  const auto x = random_vector<T>(c.src_shape.volume(), 1);
  const auto dy = random_vector<T>(dst_shape.volume(), 2);
  DistTensor<T> xt(grid, up.src_layout()), yt(grid, up.dst_layout());
  DistTensor<T> dyt(grid, up.dst_layout()), dxt(grid, up.src_layout());
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  // Garbage in the outputs must not survive.
  testing::fill_buffer(yt, T(1e6));
  testing::fill_buffer(dxt, T(1e6));
  for (int repeat = 0; repeat < 2; ++repeat) {
    up.forward(xt, yt);
    up.backward(dyt, dxt);
  }
  const std::vector<T> y = gathered(yt), dx = gathered(dxt);
  if (grid.rank() != 0) return;
  std::vector<T> y_ref(dst_shape.volume()), dx_ref(x.size());
  reference::upsample_fwd(c.desc, c.src_shape, x.data(), y_ref.data());
  reference::upsample_bwd(c.desc, c.src_shape, dy.data(), dx_ref.data());
  EXPECT_EQ(max_relative_error(y, y_ref), 0) << "forward";
  EXPECT_EQ(max_relative_error(dx, dx_ref), 0) << "backward";
}

template <typename T>
void ForEveryCaseAndGrid() {
  for (const UpsampleCase& c : cases()) {
    for (const Shape& g :
         testing::factorizations(world_size(), c.src_shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, g);
      SCOPED_TRACE(c.name + " on grid " + g.to_string());
      ExpectMatchesReference<T>(grid, c);
      if (testing::max_over(MPI_COMM_WORLD,
                            ::testing::Test::HasFailure()) != 0) {
        return;
      }
    }
  }
}

TEST(Upsample, DoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>();
}

TEST(Upsample, FloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>();
}

// Inputs with halos of width 1 (channels-last), outputs with halos of
// width 2 (channels-first): interiors are computed, halo cells keep their
// sentinel.
TEST(Upsample, TensorsWithHalosKeepTheirHalos) {
  const UpsampleCase c{"2d_3x2", {{3, 2}}, {1, 3, 4, 5}};
  ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(4));
  const Upsample<double> up(grid, c.desc,
                            Distribution(c.src_shape, grid.shape()));
  const Shape dst_shape = up.dst_distribution().global_shape();
  const auto x = random_vector<double>(c.src_shape.volume(), 3);
  const auto dy = random_vector<double>(dst_shape.volume(), 4);
  const HaloLayout in = testing::with_halos(up.src_distribution(), 1);
  const HaloLayout out = testing::with_halos(up.dst_distribution(), 2,
                                             StorageOrder::kChannelsFirst);
  const double sentinel = -5;
  DistTensor<double> xt(grid, in), yt(grid, out), dyt(grid, out),
      dxt(grid, in);
  for (DistTensor<double>* t : {&xt, &yt, &dyt, &dxt}) {
    testing::fill_buffer(*t, sentinel);
  }
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  up.forward(xt, yt);
  up.backward(dyt, dxt);
  const std::vector<double> y = gathered(yt), dx = gathered(dxt);
  bool kept = true;
  for (DistTensor<double>* t : {&xt, &yt, &dyt, &dxt}) {
    kept = kept && testing::halos_hold(*t, sentinel);
  }
  EXPECT_TRUE(kept);
  if (grid.rank() != 0) return;
  std::vector<double> y_ref(y.size()), dx_ref(x.size());
  reference::upsample_fwd(c.desc, c.src_shape, x.data(), y_ref.data());
  reference::upsample_bwd(c.desc, c.src_shape, dy.data(), dx_ref.data());
  EXPECT_EQ(max_relative_error(y, y_ref), 0) << "forward";
  EXPECT_EQ(max_relative_error(dx, dx_ref), 0) << "backward";
}

// <up(x), y> == <x, up_bwd(y)>, distributed, in double.
TEST(Upsample, BackwardIsTheAdjointOfForward) {
  for (const UpsampleCase& c : cases()) {
    ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(c.src_shape.ndims()));
    SCOPED_TRACE(c.name + " on grid " + grid.shape().to_string());
    const Upsample<double> up(grid, c.desc,
                              Distribution(c.src_shape, grid.shape()));
    DistTensor<double> x(grid, up.src_layout()), ux(grid, up.dst_layout());
    DistTensor<double> y(grid, up.dst_layout()), ty(grid, up.src_layout());
    scatter(random_vector<double>(c.src_shape.volume(), 5).data(), x, 0);
    scatter(random_vector<double>(
                up.dst_distribution().global_shape().volume(), 6)
                .data(),
            y, 0);
    up.forward(x, ux);
    up.backward(y, ty);
    const double lhs = testing::global_dot(ux, y);
    const double rhs = testing::global_dot(x, ty);
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, std::abs(lhs)));
  }
}

TEST(Upsample, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  // 2n + 1 rows: balanced over n parts, the first gets 3; scaled by 2 it
  // gets 6 of 4n + 2, where a balanced split of 4n + 2 gives it 5 (n > 1).
  const Distribution src(Shape{1, 2, 2 * n + 1, 3}, grid.shape());
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "must be >= 1",
      [&] { Upsample<float>(grid, UpsampleDesc{{2, 0}}, src); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "does not fit factors",
      [&] { Upsample<float>(grid, UpsampleDesc{{2, 2, 2}}, src); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Upsample<float>(grid, UpsampleDesc{{2, 2}},
                        Distribution(Shape{1, 2, 4, 4}, Shape{1, 1, 1, n + 1}));
      });
  const Upsample<float> up(grid, UpsampleDesc{{2, 1}}, src);
  DistTensor<float> x(grid, up.src_layout()), y(grid, up.dst_layout());
  if (n > 1) {
    DistTensor<float> balanced(
        grid, HaloLayout(Distribution(Shape{1, 2, 4 * n + 2, 3},
                                      grid.shape())));
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kShapeMismatch, "upsample: dst's distribution",
        [&] { up.forward(x, balanced); });
  }
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "upsample: diff_dst's distribution",
      [&] { up.backward(x, x); });
  up.forward(x, y);  // still usable
  up.backward(y, x);
}

}  // namespace
}  // namespace distconv
