"""loss_curve_test: an example trained on several grids (loss_curve_test.sh).

    loss_curve_test(
        name = "segmentation_loss_curve",
        binary = "segmentation",
        tolerance = "1e-5",
        flags = "--size=50 --steps=4 ...",
        runs = ["1:1x1x1x1", "2:1x1x2x1", "4:2x1x2x1"],
    )

runs are RANKS:GRID[:OPTION], the first one the reference; each run's loss
at every step must lie within `tolerance` (relative) of the first run's.
Under --config=asan only the runs of up to 4 ranks, as for the other
tests (tests/mpi_test.bzl; the default build runs them all).
"""

def loss_curve_test(name, binary, tolerance, flags, runs, tags = []):
    up_to_4 = [r for r in runs if int(r.split(":")[0]) <= 4]
    native.sh_test(
        name = name,
        size = "medium",
        srcs = ["loss_curve_test.sh"],
        args = [
            "$(rootpath :%s)" % binary,
            "120",
            tolerance,
            "'%s --machine=perf/machines/this_machine.txt'" % flags,
        ] + select({
            "//third_party:asan": up_to_4,
            "//conditions:default": runs,
        }),
        data = [
            ":" + binary,
            "//perf:machines/this_machine.txt",
            "//tests:mpi_env",
            "//tests:mpirun_test.sh",
        ],
        tags = ["cpu:4", "mpi"] + tags,
    )
