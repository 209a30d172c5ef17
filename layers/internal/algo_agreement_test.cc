// The ranks' agreement on convolution algorithms: the pure choice (the
// fastest per problem, ties to the lower algorithm, problems no one else
// has keep their own), and the collective over 1 to 4 ranks, where ranks
// bring different choices, some none, and all end with the same answer.
#include "layers/internal/algo_agreement.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using internal::agree_on_algorithms;
using internal::agreed_algorithms;
using internal::AlgoChoice;
using internal::problem_key;
using testing::world_rank;
using testing::world_size;

TEST(AlgoAgreement, KeysTellProblemsApart) {
  EXPECT_EQ(problem_key("fwd 1x16x32x32"), problem_key("fwd 1x16x32x32"));
  EXPECT_NE(problem_key("fwd 1x16x32x32"), problem_key("fwd 1x16x32x31"));
  EXPECT_NE(problem_key(""), problem_key("x"));
}

TEST(AlgoAgreement, TheFastestChoiceOfEachProblemWins) {
  const std::vector<AlgoChoice> all = {
      {7, 1, 3.0f}, {7, 4, 2.0f}, {7, 2, 2.5f},  // problem 7: 4 is fastest
      {9, 5, 1.0f}, {9, 3, 1.0f},                // problem 9: a tie, 3
      {11, 6, 0.0f},                             // not measured
  };
  const std::vector<AlgoChoice> mine = {
      {7, 1, 3.0f}, {9, 5, 1.0f}, {11, 6, 0.0f}, {13, 8, 0.5f}};
  EXPECT_EQ(agreed_algorithms(mine, all), (std::vector<int>{4, 3, 6, 8}));
  EXPECT_TRUE(agreed_algorithms({}, all).empty());
}

TEST(AlgoAgreement, EveryRankEndsWithTheSameAlgorithms) {
  const int rank = world_rank(), size = world_size();
  std::vector<AlgoChoice> mine;
  // Problem 1 on every rank, fastest on the last one.
  mine.push_back({1, rank, rank == size - 1 ? 1.0f : 2.0f + rank});
  // Problem 2 on even ranks only, equally fast: the lowest algorithm.
  if (rank % 2 == 0) mine.push_back({2, 10 + rank, 5.0f});
  // Rank 1 (where there is one) brings nothing more.
  const std::vector<int> got = agree_on_algorithms(MPI_COMM_WORLD, mine);
  ASSERT_EQ(got.size(), mine.size());
  EXPECT_EQ(got[0], size - 1);
  if (rank % 2 == 0) EXPECT_EQ(got[1], 10);
  const std::vector<int> none = agree_on_algorithms(MPI_COMM_WORLD, {});
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace distconv
