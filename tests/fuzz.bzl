"""fuzz_test: a libFuzzer target and the regression test replaying its corpus.

    fuzz_test(name = "halo_plan_fuzz", srcs = ["halo_plan_fuzz.cc"],
              deps = [":halo_plan"])

The source defines LLVMFuzzerTestOneInput and aborts (a finding) when a
property fails; bad input the code rejects with distconv::Error is fine.
The corpus is testdata/fuzz/<name>/ in the package. This defines:
  <name>             the libFuzzer binary, built only under --config=fuzz
                     (clang, -fsanitize=fuzzer; tests/fuzz.sh runs it);
  <name>_regression  a test, in every build, that runs each corpus input
                     (crash reproducers included) through the target
                     (<name>_replay, in the MPI tests' environment:
                     tests/fuzz_replay.sh).
"""

FUZZ_ONLY = select({
    "//third_party:fuzz": [],
    "//conditions:default": ["//third_party:incompatible"],
})

def fuzz_test(name, srcs, deps = []):
    corpus = "testdata/fuzz/" + name
    native.cc_binary(
        name = name + "_replay",
        testonly = True,
        srcs = srcs,
        deps = deps + ["//tests:fuzz_replay_main"],
    )
    native.sh_test(
        name = name + "_regression",
        srcs = ["//tests:fuzz_replay.sh"],
        data = native.glob([corpus + "/**"]) + [
            ":" + name + "_replay",
            "//tests:mpi_env",
        ],
        args = [
            "$(rootpath :%s_replay)" % name,
            native.package_name() + "/" + corpus,
        ],
        size = "small",
    )
    native.cc_binary(
        name = name,
        testonly = True,
        srcs = srcs,
        deps = deps,
        linkopts = ["-fsanitize=fuzzer"],
        target_compatible_with = FUZZ_ONLY,
    )
