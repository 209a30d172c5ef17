#include "tests/mpi_testing.h"

#include <cstdlib>
#include <functional>
#include <vector>

#include "gtest/gtest.h"

namespace distconv::testing {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

namespace {

// Every rank's message must equal rank 0's.
void expect_rank0_message(MPI_Comm comm, const std::string& message) {
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  std::vector<char> root(length);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) root.assign(message.begin(), message.end());
  MPI_Bcast(root.data(), length, MPI_CHAR, 0, comm);
  EXPECT_EQ(message, std::string(root.begin(), root.end()))
      << "ranks threw different errors";
}

}  // namespace

std::string expect_error_on_all_ranks(MPI_Comm comm, ErrorKind kind,
                                      const std::string& contains,
                                      const std::function<void()>& fn) {
  std::string message;
  bool right_kind = false;
  try {
    fn();
  } catch (const Error& e) {
    message = e.what();
    right_kind = e.kind() == kind;
  } catch (const std::exception& e) {
    message = std::string("not a distconv::Error: ") + e.what();
  }
  EXPECT_TRUE(right_kind) << "expected a distconv::Error of kind "
                          << to_string(kind) << ", got: '" << message << "'";
  EXPECT_NE(message.find(contains), std::string::npos)
      << "message '" << message << "' lacks '" << contains << "'";
  expect_rank0_message(comm, message);
  return message;
}

std::optional<std::string> same_outcome_on_all_ranks(
    MPI_Comm comm, ErrorKind kind, const std::function<void()>& fn) {
  int threw = 0;
  std::string message;
  try {
    fn();
  } catch (const Error& e) {
    threw = 1;
    message = e.what();
    EXPECT_EQ(e.kind(), kind) << "expected a distconv::Error of kind "
                              << to_string(kind) << ", got: '" << message
                              << "'";
  } catch (const std::exception& e) {
    threw = 1;
    message = std::string("not a distconv::Error: ") + e.what();
    ADD_FAILURE() << message;
  }
  int all = 0, any = 0;
  MPI_Allreduce(&threw, &all, 1, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(&threw, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!any) return std::nullopt;
  EXPECT_EQ(all, 1) << "some ranks threw, others went on";
  expect_rank0_message(comm, message);
  return message;
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

double sum_over(MPI_Comm comm, double local) {
  double total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total;
}

long long max_over(MPI_Comm comm, long long local) {
  long long m = 0;
  MPI_Allreduce(&local, &m, 1, MPI_LONG_LONG, MPI_MAX, comm);
  return m;
}

}  // namespace distconv::testing
