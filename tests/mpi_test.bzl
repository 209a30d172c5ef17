"""Test macros for distconv.

mpi_cc_test: a GoogleTest binary run under mpirun at several rank counts.
    mpi_cc_test(name = "halo_test", srcs = ["halo_test.cc"], deps = [...])
  defines halo_test_bin (the binary), halo_test_np1 ... halo_test_np8
  (one sh_test per rank count) and the test_suite halo_test. test_args are
  passed to the binary (e.g. a --gtest_filter). main() comes from
  //tests:mpi_test_main; tests may use MPI_COMM_WORLD. The rank counts
  above sanitizer_ranks are tagged "many_ranks", which .ci/run's
  sanitizer phase leaves out (the default build runs every rank count).

cc_unit_test: a plain (no MPI) GoogleTest cc_test with gtest_main.
"""

def mpi_cc_test(
        name,
        srcs,
        deps = [],
        ranks = [1, 2, 3, 4, 6, 8],
        sanitizer_ranks = 4,
        timeout_s = 120,
        size = "medium",
        tags = [],
        target_compatible_with = None,
        test_args = [],
        **kwargs):
    binary = name + "_bin"
    native.cc_binary(
        name = binary,
        testonly = True,
        srcs = srcs,
        target_compatible_with = target_compatible_with,
        deps = deps + [
            "//tests:mpi_test_main",
            "@gtest//:gtest",
        ],
    )
    tests = []
    for n in ranks:
        test = "%s_np%d" % (name, n)
        native.sh_test(
            name = test,
            size = size,
            srcs = ["//tests:mpirun_test.sh"],
            args = [str(n), "$(rootpath :%s)" % binary, str(timeout_s)] +
                   test_args,
            data = [":" + binary, "//tests:mpi_env"],
            # "cpu:N" makes Bazel reserve N cores for an N-rank test (a test
            # asking for more cores than the machine has runs alone).
            tags = tags + ["mpi", "cpu:%d" % n] +
                   (["many_ranks"] if n > sanitizer_ranks else []),
            target_compatible_with = target_compatible_with,
            **kwargs
        )
        tests.append(":" + test)
    native.test_suite(name = name, tests = tests, tags = tags)

def cc_unit_test(name, srcs, deps = [], **kwargs):
    native.cc_test(
        name = name,
        srcs = srcs,
        deps = deps + ["@gtest//:gtest_main"],
        **kwargs
    )
