// main() for MPI GoogleTest binaries (used by mpi_cc_test in tests/mpi_test.bzl).
//
// Every rank runs the same tests; a test fails if it fails on any rank.
//  * --timeout_s=N (default 120): a rank still running after N seconds prints
//    "distconv test: rank R timed out after N s (deadlock?)" and the running
//    test's name, and exits with 3.
//  * Arguments that MPI, gtest and --timeout_s leave are the test's own:
//    testing::test_args() (tests/test_args.h).
//  * Rank 0 prints gtest's usual output, plus
//    "[  FAILED  ] Suite.Test failed on ranks 1,3" when other ranks failed.
//    Other ranks print only their own failures, prefixed with "[rank R]".
//  * Rank 0 ends with "distconv: P passed, F failed" (", S skipped" added
//    when tests skipped themselves on every rank); every rank exits
//    non-zero if any test failed on any rank.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_args.h"

namespace {

// Written by the SIGALRM handler, which may only call async-signal-safe code,
// so the message is formatted before the alarm is armed.
char g_timeout_message[128];
int g_timeout_message_len = 0;
char g_current_test[256];  // "  in Suite.Test\n" while a test runs

void OnAlarm(int) {
  (void)!write(STDERR_FILENO, g_timeout_message, g_timeout_message_len);
  (void)!write(STDERR_FILENO, g_current_test, std::strlen(g_current_test));
  _exit(3);
}

void ArmTimeout(int rank, int timeout_s) {
  g_timeout_message_len = std::snprintf(
      g_timeout_message, sizeof(g_timeout_message),
      "distconv test: rank %d timed out after %d s (deadlock?)\n", rank,
      timeout_s);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnAlarm;
  sigaction(SIGALRM, &action, nullptr);
  alarm(static_cast<unsigned>(timeout_s));
}

// Removes --timeout_s=N from argv and returns N (default 120).
int TakeTimeoutFlag(int* argc, char** argv) {
  const char kFlag[] = "--timeout_s=";
  int timeout_s = 120;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], kFlag, sizeof(kFlag) - 1) == 0) {
      timeout_s = std::atoi(argv[i] + sizeof(kFlag) - 1);
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return timeout_s > 0 ? timeout_s : 120;
}

// Combines each test's result over all ranks (collective in OnTestEnd).
class MpiResultListener : public testing::EmptyTestEventListener {
 public:
  MpiResultListener(int rank, int size) : rank_(rank), size_(size) {}

  int passed() const { return passed_; }
  int failed() const { return failed_; }
  int skipped() const { return skipped_; }

  void OnTestStart(const testing::TestInfo& info) override {
    std::snprintf(g_current_test, sizeof(g_current_test), "  in %s.%s\n",
                  info.test_suite_name(), info.name());
  }

  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (rank_ == 0 || !result.failed()) return;  // rank 0: gtest prints it
    std::printf("[rank %d] %s:%d: Failure\n%s\n", rank_,
                result.file_name() ? result.file_name() : "unknown",
                result.line_number(), result.message());
    std::fflush(stdout);
  }

  void OnTestEnd(const testing::TestInfo& info) override {
    g_current_test[0] = '\0';
    int mine = info.result()->Failed() ? 1 : 0;
    // [failed anywhere, ran (not skipped) anywhere]
    int local[2] = {mine, info.result()->Skipped() ? 0 : 1}, all[2] = {0, 0};
    MPI_Allreduce(local, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    const int any = all[0];
    std::vector<int> flags(rank_ == 0 ? size_ : 0);
    MPI_Gather(&mine, 1, MPI_INT, flags.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!any) {
      ++(all[1] ? passed_ : skipped_);
      return;
    }
    ++failed_;
    if (rank_ != 0) return;
    std::string ranks;
    for (int r = 0; r < size_; ++r) {
      if (flags[r]) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    }
    std::printf("[  FAILED  ] %s.%s failed on ranks %s\n", info.test_suite_name(),
                info.name(), ranks.c_str());
    std::fflush(stdout);
  }

 private:
  int rank_, size_;
  int passed_ = 0, failed_ = 0, skipped_ = 0;
};

std::vector<std::string>& leftover_args() {
  static std::vector<std::string> args;
  return args;
}

}  // namespace

const std::vector<std::string>& distconv::testing::test_args() {
  return leftover_args();
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ArmTimeout(rank, TakeTimeoutFlag(&argc, argv));

  testing::InitGoogleTest(&argc, argv);
  leftover_args().assign(argv + 1, argv + argc);
  // At most one rank may write a --gtest_output report to a given path.
  if (rank != 0) GTEST_FLAG_SET(output, "");

  // Our listener goes before gtest's printer, so that for "end" events (sent
  // in reverse order) rank 0's "[ FAILED ] ... on ranks" line follows gtest's.
  testing::TestEventListeners& listeners =
      testing::UnitTest::GetInstance()->listeners();
  testing::TestEventListener* printer =
      listeners.Release(listeners.default_result_printer());
  auto* mpi_listener = new MpiResultListener(rank, size);
  listeners.Append(mpi_listener);
  if (rank == 0) {
    listeners.Append(printer);
  } else {
    delete printer;
  }

  int local_error = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_error = 0;
  MPI_Allreduce(&local_error, &any_error, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("distconv: %d passed, %d failed", mpi_listener->passed(),
                mpi_listener->failed());
    if (mpi_listener->skipped() > 0) {
      std::printf(", %d skipped", mpi_listener->skipped());
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  MPI_Finalize();
  return any_error || mpi_listener->failed() ? 1 : 0;
}
