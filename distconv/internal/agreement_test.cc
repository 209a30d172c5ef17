#include "distconv/internal/agreement.h"

#include <mpi.h>

#include <string>

#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "gtest/gtest.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using internal::agree;
using internal::Fingerprint;
using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

Fingerprint conv(const Shape& kernel) {
  Fingerprint f("convolution");
  f.add("element type", "float32")
      .add("kernel", kernel)
      .add("stride", Shape{1, 1});
  return f;
}

TEST(Agreement, TheSameFingerprintPasses) {
  EXPECT_NO_THROW(agree(MPI_COMM_WORLD, conv(Shape{3, 3})));
}

// The last rank differs: every rank names rank 0's value and the lowest
// rank that differs.
TEST(Agreement, AValueNamesTheFieldAndTwoRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int last = world_size() - 1;
  const Shape kernel = world_rank() == last ? Shape{5, 5} : Shape{3, 3};
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "ranks disagree on the convolution: kernel 3x3 on rank 0, 5x5 on "
      "rank " +
          std::to_string(last),
      [&] { agree(MPI_COMM_WORLD, conv(kernel)); });
}

TEST(Agreement, AFieldOnOneRankOnly) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  Fingerprint f = conv(Shape{3, 3});
  if (world_rank() == 1) f.add("bias", true);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "(nothing) (nothing) on rank 0, bias yes on rank 1",
                            [&] { agree(MPI_COMM_WORLD, f); });
}

TEST(Agreement, AnotherObject) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  Fingerprint f(world_rank() == 0 ? "convolution" : "pooling");
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "ranks disagree on the object they build: convolution on rank 0, "
      "pooling on rank 1",
      [&] { agree(MPI_COMM_WORLD, f); });
}

// Two ranks split the same height differently: the split is named.
TEST(Agreement, ADifferentSplitOfTheSameShape) {
  if (world_size() != 2) GTEST_SKIP() << "for 2 ranks";
  const Distribution even(Shape{1, 4, 32, 32}, Shape{1, 1, 2, 1});
  const Distribution uneven(
      {BlockPartition::balanced(1, 1), BlockPartition::balanced(4, 1),
       BlockPartition::from_sizes({20, 12}), BlockPartition::balanced(32, 1)});
  Fingerprint f("pooling");
  f.add("input", world_rank() == 0 ? even : uneven);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "input split dimension 2: 16/16 on rank 0, "
                            "dimension 2: 20/12 on rank 1",
                            [&] { agree(MPI_COMM_WORLD, f); });
}

TEST(Agreement, HaloWidthsAndBoundaries) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Distribution dist(Shape{1, 2, 16, 8}, Shape{1, 1, world_size(), 1});
  const HaloLayout one(dist, HaloWidths::symmetric({0, 0, 1, 1}));
  const HaloLayout two(dist, HaloWidths::symmetric({0, 0, 2, 1}));
  const HaloLayout periodic(
      dist, HaloWidths::symmetric({0, 0, 1, 1}),
      {Boundary::kOpen, Boundary::kOpen, Boundary::kPeriodic, Boundary::kOpen});
  Fingerprint widths("halo exchange"), bounds("halo exchange");
  widths.add("layout", world_rank() == 1 ? two : one);
  bounds.add("layout", world_rank() == 1 ? periodic : one);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "layout halo widths",
                            [&] { agree(MPI_COMM_WORLD, widths); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "layout boundaries open,open,open,open on rank 0, "
                            "open,open,periodic,open on rank 1",
                            [&] { agree(MPI_COMM_WORLD, bounds); });
}

}  // namespace
}  // namespace distconv
