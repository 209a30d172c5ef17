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
using testing::world_rank;
using testing::world_size;

TEST(AlgoAgreement, TheFastestChoiceOfEachProblemWins) {
  const std::vector<AlgoChoice> all = {
      {7, 1, 0, 3.0f},  {7, 4, 2, 2.0f}, {7, 2, 0, 2.5f},  // 7: 4 fastest
      {9, 5, 0, 1.0f},  {9, 3, 1, 1.0f}, {9, 3, 0, 1.0f},  // 9: ties, 3/0
      {11, 6, 0, 0.0f},                                    // not measured
  };
  const std::vector<AlgoChoice> mine = {
      {7, 1, 0, 3.0f}, {9, 5, 0, 1.0f}, {11, 6, 0, 0.0f}, {13, 8, 1, 0.5f}};
  const std::vector<AlgoChoice> got = agreed_algorithms(mine, all);
  ASSERT_EQ(got.size(), mine.size());
  // Each the winning choice of its problem, with the winner's math and
  // time.
  const std::vector<AlgoChoice> want = {
      {7, 4, 2, 2.0f}, {9, 3, 0, 1.0f}, {11, 6, 0, 0.0f}, {13, 8, 1, 0.5f}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].problem, want[i].problem) << i;
    EXPECT_EQ(got[i].algorithm, want[i].algorithm) << i;
    EXPECT_EQ(got[i].math, want[i].math) << i;
    EXPECT_EQ(got[i].ms, want[i].ms) << i;
  }
  EXPECT_TRUE(agreed_algorithms({}, all).empty());
}

TEST(AlgoAgreement, EveryRankEndsWithTheSameAlgorithms) {
  const int rank = world_rank(), size = world_size();
  std::vector<AlgoChoice> mine;
  // Problem 1 on every rank, fastest on the last one.
  mine.push_back({1, rank, rank, rank == size - 1 ? 1.0f : 2.0f + rank});
  // Problem 2 on even ranks only, equally fast: the lowest algorithm.
  if (rank % 2 == 0) mine.push_back({2, 10 + rank, 0, 5.0f});
  // Rank 1 (where there is one) brings nothing more.
  const std::vector<AlgoChoice> got = agree_on_algorithms(MPI_COMM_WORLD, mine);
  ASSERT_EQ(got.size(), mine.size());
  EXPECT_EQ(got[0].algorithm, size - 1);
  EXPECT_EQ(got[0].math, size - 1);
  EXPECT_EQ(got[0].ms, 1.0f);
  if (rank % 2 == 0) EXPECT_EQ(got[1].algorithm, 10);
  const std::vector<AlgoChoice> none = agree_on_algorithms(MPI_COMM_WORLD, {});
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace distconv
