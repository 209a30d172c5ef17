#include "distconv/internal/mpi_util.h"

#include <mpi.h>

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

}  // namespace
}  // namespace distconv
