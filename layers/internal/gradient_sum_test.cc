// GradientSum: the sum over every rank, and ranks that size it differently
// refused at construction on every rank alike (inside the allreduce's
// completion the mismatch would abort the job).
#include "layers/internal/gradient_sum.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distconv/error.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using internal::GradientSum;
using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

TEST(GradientSum, SumsOverEveryRank) {
  GradientSum<double> sum(MPI_COMM_WORLD, 5, 2);
  std::vector<double> dw(5), db(2);
  for (int round = 0; round < 2; ++round) {
    sum.zero();
    for (int i = 0; i < 5; ++i) sum.weights()[i] = world_rank() + i + round;
    for (int i = 0; i < 2; ++i) sum.bias()[i] = 10.0 * world_rank() - i;
    sum.start(dw.data(), db.data());
    sum.poke();
    sum.wait();
    const double p = world_size(), ranks = p * (p - 1) / 2;
    for (int i = 0; i < 5; ++i) EXPECT_EQ(dw[i], ranks + p * (i + round));
    for (int i = 0; i < 2; ++i) EXPECT_EQ(db[i], 10.0 * ranks - p * i);
  }
}

TEST(GradientSum, RanksThatSizeItDifferentlyAreRefused) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  const bool odd = world_rank() == world_size() - 1;
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "ranks disagree on the gradient allreduce: bias elements 2 on rank 0, "
      "0 on rank " +
          std::to_string(world_size() - 1),
      [&] { GradientSum<float> sum(MPI_COMM_WORLD, 9, odd ? 0 : 2); });
}

TEST(GradientSum, WaitWithNothingInFlightIsAStateError) {
  GradientSum<float> sum(MPI_COMM_WORLD, 3, 0);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "no backward_weights in flight",
                            [&] { sum.wait(); });
}

}  // namespace
}  // namespace distconv
