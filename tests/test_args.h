// The command-line arguments of an MPI test binary (tests/mpi_test_main.cc)
// that neither MPI, GoogleTest nor the test main took, in order: what a
// test reads its own flags from.
//
//   for (const std::string& a : testing::test_args()) ...  // "--cases=40"
#ifndef DISTCONV_TESTS_TEST_ARGS_H_
#define DISTCONV_TESTS_TEST_ARGS_H_

#include <string>
#include <vector>

namespace distconv::testing {

const std::vector<std::string>& test_args();

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_TEST_ARGS_H_
