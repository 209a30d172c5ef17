// Checks the MPI test harness itself: every rank runs each test, and
// collectives and point-to-point messages (eager and rendezvous) work.
#include <mpi.h>

#include <vector>

#include "gtest/gtest.h"

namespace {

TEST(MpiHarness, AllreduceOfRanksIsTriangularNumber) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long sum = 0, mine = rank;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, static_cast<long>(size) * (size - 1) / 2);
}

// 4 MB messages take Open MPI's rendezvous path, not only the eager one.
TEST(MpiHarness, RingExchangeReachesNeighbours) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const int n = 1 << 20;
  std::vector<int> out(n, rank), in(n, -1);
  MPI_Sendrecv(out.data(), n, MPI_INT, next, 0, in.data(), n, MPI_INT, prev, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  EXPECT_EQ(in.front(), prev);
  EXPECT_EQ(in.back(), prev);
}

}  // namespace
