// Test helpers for MPI tests: checking that an error is thrown identically
// on every rank, and global reductions.
#ifndef DISTCONV_TESTS_MPI_TESTING_H_
#define DISTCONV_TESTS_MPI_TESTING_H_

#include <mpi.h>

#include <functional>
#include <optional>
#include <string>

#include "distconv/error.h"

namespace distconv::testing {

int world_rank();
int world_size();

// Runs fn on every rank of comm and adds a test failure unless every rank
// threw a distconv::Error of `kind` with the same message (compared across
// ranks), and the message contains `contains`. Returns this rank's message.
std::string expect_error_on_all_ranks(MPI_Comm comm, ErrorKind kind,
                                      const std::string& contains,
                                      const std::function<void()>& fn);

// Runs fn on every rank of comm: nothing when no rank threw; otherwise
// adds a test failure unless every rank threw a distconv::Error of `kind`
// with the same message, and returns this rank's message.
std::optional<std::string> same_outcome_on_all_ranks(
    MPI_Comm comm, ErrorKind kind, const std::function<void()>& fn);

double sum_over(MPI_Comm comm, double local);

// `name` inside the test's scratch directory ($TEST_TMPDIR, else /tmp):
// the same path on every rank.
std::string temp_path(const std::string& name);
long long max_over(MPI_Comm comm, long long local);

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_MPI_TESTING_H_
