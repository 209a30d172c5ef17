#include "distconv/process_grid.h"

#include <vector>

#include "distconv/error.h"
#include "gtest/gtest.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

int comm_size(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

int comm_rank(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}

TEST(ProcessGrid, CoordinatesAndSubCommunicatorsOnEveryFactorization) {
  for (int ndims : {4, 5}) {
    for (const Shape& shape : testing::factorizations(world_size(), ndims)) {
      SCOPED_TRACE(shape.to_string());
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      ASSERT_EQ(grid.size(), world_size());
      ASSERT_EQ(grid.rank(), world_rank());
      const Shape me = grid.coord();
      EXPECT_EQ(grid.rank_of(me), grid.rank());
      for (int r = 0; r < grid.size(); ++r) {
        EXPECT_EQ(grid.rank_of(grid.coord_of(r)), r);
      }
      for (int d = 0; d < ndims; ++d) {
        // along(d): the ranks differing only in d, ranked by coordinate.
        EXPECT_EQ(comm_size(grid.along(d)), shape[d]);
        EXPECT_EQ(comm_rank(grid.along(d)), me[d]);
        // slice(d): everybody sharing my coordinate in d.
        EXPECT_EQ(comm_size(grid.slice(d)), grid.size() / shape[d]);
        // Sum of the other ranks' coordinate along d must be mine everywhere.
        long long mine = me[d], sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, grid.slice(d));
        EXPECT_EQ(sum, mine * comm_size(grid.slice(d)));
        // Along d, the other coordinates agree.
        long long key = grid.rank() - me[d] * row_major_strides(shape)[d];
        long long lo = 0, hi = 0;
        MPI_Allreduce(&key, &lo, 1, MPI_LONG_LONG, MPI_MIN, grid.along(d));
        MPI_Allreduce(&key, &hi, 1, MPI_LONG_LONG, MPI_MAX, grid.along(d));
        EXPECT_EQ(lo, hi);
      }
      EXPECT_EQ(comm_size(grid.sample_comm()), grid.size() / shape[0]);
    }
  }
}

TEST(ProcessGrid, DuplicatesTheCommunicatorAndMoves) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{world_size(), 1, 1, 1});
  int cmp = 0;
  MPI_Comm_compare(grid.comm(), MPI_COMM_WORLD, &cmp);
  EXPECT_EQ(cmp, MPI_CONGRUENT);
  ProcessGrid moved = std::move(grid);
  EXPECT_EQ(moved.size(), world_size());
  MPI_Comm_compare(moved.comm(), MPI_COMM_WORLD, &cmp);
  EXPECT_EQ(cmp, MPI_CONGRUENT);
  ProcessGrid other(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  other = std::move(moved);
  EXPECT_EQ(other.shape(), (Shape{world_size(), 1, 1, 1}));
}

TEST(ProcessGrid, WrongSizeFailsOnEveryRank) {
  const int n = world_size();
  const std::string msg = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch, "communicator has", [&] {
        ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, n});
      });
  EXPECT_NE(msg.find("needs " + std::to_string(2 * n) + " ranks"),
            std::string::npos)
      << msg;
}

// Two extents whose product wraps around 2^64 to exactly the number of
// ranks: 2^64 + n = a * b with 3 <= a < b < 2^63.
Shape wrapping_to(int n) {
  const unsigned __int128 target = (static_cast<unsigned __int128>(1) << 64) + n;
  unsigned __int128 a = 3;
  while (target % a != 0) ++a;
  return Shape{1, static_cast<Index>(a), static_cast<Index>(target / a), 1};
}

TEST(ProcessGrid, HugeShapesDoNotWrapAroundToTheRankCount) {
  const Shape huge = wrapping_to(world_size());
  const std::string msg = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch, "communicator has",
      [&] { ProcessGrid grid(MPI_COMM_WORLD, huge); });
  EXPECT_NE(msg.find("overflows"), std::string::npos) << msg;
  // Extents that overflow on their own, and one past the rank count.
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch, "communicator has", [&] {
        ProcessGrid grid(MPI_COMM_WORLD,
                         Shape{world_size(), Index{1} << 62, 4, 1});
      });
}

TEST(ProcessGrid, RanksDisagreeingOnTheGridFailTogether) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks to disagree";
  const int n = world_size();
  const Shape shape = world_rank() == 0 ? Shape{1, 1, 1, n} : Shape{1, 1, n, 1};
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "ranks disagree on the process grid",
                            [&] { ProcessGrid grid(MPI_COMM_WORLD, shape); });
}

TEST(ProcessGrid, BadArgumentsFailOnEveryRank) {
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "must be >= 1", [&] {
        ProcessGrid grid(MPI_COMM_WORLD, Shape{world_size(), 0, 1, 1});
      });
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "outside grid", [&] { grid.along(4); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "outside grid",
                            [&] { grid.coord_of(world_size()); });
}

}  // namespace
}  // namespace distconv
