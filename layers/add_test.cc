// Distributed element-wise addition against the sums of the gathered
// global tensors, on every grid the rank count factors into; in place
// (dst aliasing a, b or both); tensors with different halos and storage
// orders; bad input.
#include "layers/add.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/shard_testing.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::gathered;
using testing::scattered;
using testing::world_size;

template <typename T>
std::vector<T> sum(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

template <typename T>
void ExpectSums(const ProcessGrid& grid, const Shape& shape) {
  SCOPED_TRACE(sizeof(T) == 8 ? "double" : "float");
  const Index n = shape.volume();
  const auto a = random_vector<T>(n, 1), b = random_vector<T>(n, 2);
  const HaloLayout layout = HaloLayout(Distribution(shape, grid.shape()))
                                .with_storage(StorageOrder::kChannelsLast);
  DistTensor<T> at = scattered(grid, layout, a);
  DistTensor<T> bt = scattered(grid, layout, b);
  DistTensor<T> yt(grid, layout);
  add(at, bt, yt);
  const std::vector<T> y = gathered(yt);
  add(at, bt, at);  // a += b
  const std::vector<T> a_plus_b = gathered(at);
  add(bt, bt, bt);  // b *= 2
  const std::vector<T> twice_b = gathered(bt);
  // Backward into fresh tensors, and with diff_a being diff_dst itself.
  DistTensor<T> da(grid, layout), db(grid, layout);
  add_backward(yt, da, db);
  const std::vector<T> da_all = gathered(da), db_all = gathered(db);
  add_backward(yt, yt, db);
  const std::vector<T> dy_after = gathered(yt);
  if (grid.rank() != 0) return;
  const std::vector<T> want = sum(a, b);
  EXPECT_EQ(max_relative_error(y, want), 0) << "add";
  EXPECT_EQ(max_relative_error(a_plus_b, want), 0) << "add into a";
  EXPECT_EQ(max_relative_error(twice_b, sum(b, b)), 0) << "add b to itself";
  EXPECT_EQ(max_relative_error(da_all, want), 0) << "backward: diff_a";
  EXPECT_EQ(max_relative_error(db_all, want), 0) << "backward: diff_b";
  EXPECT_EQ(max_relative_error(dy_after, want), 0) << "backward in place";
}

TEST(Add, MatchesTheGlobalSumOnEveryGrid) {
  for (const Shape& shape : {Shape{2, 3, 5, 7}, Shape{1, 4, 3, 5, 2}}) {
    for (const Shape& g : testing::factorizations(world_size(),
                                                  shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, g);
      SCOPED_TRACE(shape.to_string() + " on grid " + g.to_string());
      ExpectSums<double>(grid, shape);
      ExpectSums<float>(grid, shape);
      if (testing::max_over(MPI_COMM_WORLD,
                            ::testing::Test::HasFailure()) != 0) {
        return;
      }
    }
  }
}

// a with halos of width 1 (channels-last), b plain channels-first, dst
// with halos of width 2: the sum lands in dst's interior; no halo cell is
// read (they hold NaN) or written.
TEST(Add, TensorsWithHalosKeepTheirHalos) {
  const Shape shape{1, 5, 7, 6};
  ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(4));
  const Distribution dist(shape, grid.shape());
  const Index n = shape.volume();
  const auto a = random_vector<float>(n, 3), b = random_vector<float>(n, 4);
  const float sentinel = std::nanf("");
  DistTensor<float> at(grid, testing::with_halos(dist, 1));
  DistTensor<float> bt(grid, HaloLayout(dist));
  DistTensor<float> yt(grid, testing::with_halos(dist, 2));
  testing::fill_buffer(at, sentinel);
  testing::fill_buffer(yt, 5.0f);
  scatter(a.data(), at, 0);
  scatter(b.data(), bt, 0);
  add(at, bt, yt);
  const std::vector<float> y = gathered(yt);
  if (grid.rank() == 0) {
    EXPECT_EQ(max_relative_error(y, sum(a, b)), 0);
  }
  EXPECT_TRUE(testing::halos_hold(yt, 5.0f));
}

TEST(Add, DistributionMismatchFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  const Distribution dist(Shape{1, 4, 2 * n, 3}, grid.shape());
  DistTensor<double> a(grid, HaloLayout(dist)), b(grid, HaloLayout(dist));
  // The same global shape split at other points.
  std::vector<Index> rows(n, 2);
  rows[0] = 1;
  rows[n - 1] += 1;
  const Distribution other({BlockPartition::balanced(1, 1),
                            BlockPartition::balanced(4, 1),
                            BlockPartition::from_sizes(rows),
                            BlockPartition::balanced(3, 1)});
  DistTensor<double> c(grid, HaloLayout(other));
  DistTensor<double> wider(
      grid, HaloLayout(Distribution(Shape{1, 5, 2 * n, 3}, grid.shape())));
  if (n > 1) {
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kShapeMismatch, "add: b's distribution",
        [&] { add(a, c, b); });
  }
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "add: dst's distribution",
      [&] { add(a, b, wider); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "add backward: diff_b's distribution",
      [&] { add_backward(a, b, wider); });
}

}  // namespace
}  // namespace distconv
