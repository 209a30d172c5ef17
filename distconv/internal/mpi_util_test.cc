#include "distconv/internal/mpi_util.h"

#include <mpi.h>

#include <new>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "gtest/gtest.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using internal::run_collectively;
using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

TEST(RunCollectively, NothingThrownIsNothingThrown) {
  int calls = 0;
  EXPECT_NO_THROW(run_collectively(MPI_COMM_WORLD, [&] { ++calls; }));
  EXPECT_EQ(calls, 1);
}

// A failure on the last rank alone reaches every rank, kind and message.
TEST(RunCollectively, OneRanksErrorIsEveryRanks) {
  const int last = world_size() - 1;
  const std::string message = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kDevice, "cudaMalloc of 64 bytes failed", [&] {
        run_collectively(MPI_COMM_WORLD, [&] {
          if (world_rank() == last) {
            throw Error(ErrorKind::kDevice, "cudaMalloc of 64 bytes failed");
          }
        });
      });
  EXPECT_NE(message.find("(on rank " + std::to_string(last) + ")"),
            std::string::npos)
      << message;
}

// Different failures: the lowest failing rank's wins everywhere.
TEST(RunCollectively, TheLowestFailingRankWins) {
  const int lowest = world_size() > 1 ? 1 : 0;
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, world_size() > 1 ? ErrorKind::kShapeMismatch
                                       : ErrorKind::kState,
      "from rank " + std::to_string(lowest), [&] {
        run_collectively(MPI_COMM_WORLD, [&] {
          const int r = world_rank();
          if (r >= lowest) {
            throw Error(r == 1 ? ErrorKind::kShapeMismatch : ErrorKind::kState,
                        "from rank " + std::to_string(r));
          }
        });
      });
}

// An allocation that fails on one rank (std::bad_alloc) is the same Error
// on every rank, not an exception that leaves the others in the next
// collective.
TEST(RunCollectively, AFailedAllocationIsAnErrorOnEveryRank) {
  const int last = world_size() - 1;
  const std::string message = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "cannot allocate memory",
      [&] {
        run_collectively(MPI_COMM_WORLD, [&] {
          if (world_rank() == last) throw std::bad_alloc();
        });
      });
  EXPECT_NE(message.find("(on rank " + std::to_string(last) + ")"),
            std::string::npos)
      << message;
}

// A failed request in MPI_Waitall: the error names what failed (a
// truncated message), not MPI's generic "error code in status"; the list
// ends empty.
TEST(WaitAll, ReportsTheFailedRequestsError) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  MPI_Comm comm;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), MPI_SUCCESS);
  // Ranks 0 and 1: rank 0 sends 8 values where rank 1 made room for 4.
  double buf[8] = {0};
  std::vector<MPI_Request> requests;  // ranks 0 and 1 post one each
  if (world_rank() < 2) requests.push_back(MPI_REQUEST_NULL);
  if (world_rank() == 0) {
    MPI_Isend(buf, 8, MPI_DOUBLE, 1, 0, comm, &requests[0]);
    EXPECT_NO_THROW(internal::wait_all(requests));
  } else if (world_rank() == 1) {
    MPI_Irecv(buf, 4, MPI_DOUBLE, 0, 0, comm, &requests[0]);
    try {
      internal::wait_all(requests);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kMpi);
      EXPECT_NE(std::string(e.what()).find("MPI_ERR_TRUNCATE"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_TRUE(requests.empty());
  MPI_Comm_free(&comm);
}

// Each rank's bytes, in rank order, on every rank: rank r gives r bytes
// (rank 0 none), zero bytes included.
TEST(AllgatherBytes, GivesEveryRanksBytesInRankOrder) {
  const std::string mine(
      static_cast<size_t>(world_rank()),
      static_cast<char>(world_rank() == 1 ? 0 : 'a' + world_rank()));
  const std::vector<std::string> each =
      internal::allgather_bytes(MPI_COMM_WORLD, mine);
  ASSERT_EQ(static_cast<int>(each.size()), world_size());
  for (int r = 0; r < world_size(); ++r) {
    EXPECT_EQ(each[r], std::string(static_cast<size_t>(r),
                                   static_cast<char>(r == 1 ? 0 : 'a' + r)))
        << "rank " << r;
  }
}

}  // namespace
}  // namespace distconv
