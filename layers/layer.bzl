"""The targets of one layer and of one plan, written once.

distconv_layer: a distributed layer's libraries and tests.

    distconv_layer(
        name = "pooling",
        deps = [":pool_plan", "//kernels:local_pool"],
        device = {"deps": ["//kernels/cuda:pool"]},
        test = {"deps": ["//kernels/reference:pool"], "timeout_s": 300},
        device_test = {"ranks": [1, 2, 3, 4], "timeout_s": 600},
    )

defines
  :pooling             the layer in host memory: pooling.cc and pooling.h,
                       whole in libdistconv.so (install/BUILD);
  :device_pooling      the layer in GPU memory (Pooling<T, DeviceSpace>):
                       device_pooling.cc, with --config=cuda only; when
                       `device` is given;
  :pooling_test        pooling_test.cc under mpirun (mpi_cc_test), when
                       `test` is given;
  :device_pooling_test device_pooling_test.cc under mpirun, several ranks
                       sharing one GPU, with --config=cuda only; when
                       `device_test` is given.

Each library depends on what every layer uses (LAYER_DEPS) and each test on
the layer and what every test of its kind uses (LAYER_TEST_DEPS,
DEVICE_TEST_DEPS); the deps given add what is particular to the layer. The
dicts `test` and `device_test` take mpi_cc_test's arguments (deps, ranks,
timeout_s, size, ...); `device` takes deps and copts.

distconv_plan: a pure plan (name.cc, name.h; no MPI) on the core, and its
unit test name_test.cc when test_deps is given.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")
load("//tests:mpi_test.bzl", "cc_unit_test", "mpi_cc_test")
load("//third_party:cuda.bzl", "CUDA_ONLY", "if_cuda")

# What every layer in host memory uses: the core vocabulary, the grid,
# tensors and the pimpl of its plan.
LAYER_DEPS = [
    "//distconv:core",
    "//distconv:dist_tensor",
    "//distconv:pimpl",
    "//distconv:process_grid",
]

# What every host layer test uses: tensors, the comparison with the serial
# reference and the MPI test helpers.
LAYER_TEST_DEPS = [
    "//distconv:dist_tensor",
    "//tests:conv_check",
    "//tests:layer_testing",
    "//tests:mpi_testing",
]

# What every GPU layer test uses.
DEVICE_TEST_DEPS = [
    ":device_layer_testing",
    "//distconv:device_space",
    "//distconv:dist_tensor",
    "//tests:mpi_testing",
]

def _union(*lists):
    out = []
    for items in lists:
        for item in items:
            if item not in out:
                out.append(item)
    return out

def distconv_layer(
        name,
        deps = [],
        copts = [],
        device = None,
        test = None,
        device_test = None):
    """The layer `name`'s libraries and tests (see the file's docstring)."""
    native.cc_library(
        name = name,
        alwayslink = True,  # whole in libdistconv.so (install/BUILD)
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        copts = copts,
        deps = _union(LAYER_DEPS, deps),
    )
    if device != None:
        native.cc_library(
            name = "device_" + name,
            srcs = ["device_%s.cc" % name],
            copts = device.get("copts", []),
            target_compatible_with = CUDA_ONLY,
            deps = _union(
                [":" + name, "//distconv:device_space"],
                device.get("deps", []),
            ) + if_cuda(["@cuda//:cudart"]),
        )
    if test != None:
        args = dict(test)
        mpi_cc_test(
            name = name + "_test",
            srcs = args.pop("srcs", [name + "_test.cc"]),
            deps = _union([":" + name], LAYER_TEST_DEPS, args.pop("deps", [])),
            **args
        )
    if device_test != None:
        args = dict(device_test)
        mpi_cc_test(
            name = "device_%s_test" % name,
            srcs = ["device_%s_test.cc" % name],
            ranks = args.pop("ranks", [1, 2, 3]),  # ranks share one GPU
            timeout_s = args.pop("timeout_s", 300),
            target_compatible_with = CUDA_ONLY,
            deps = _union(
                [":" + name, ":device_" + name],
                DEVICE_TEST_DEPS,
                args.pop("deps", []),
            ) + if_cuda(["@cuda//:cudart"]),
            **args
        )

def distconv_plan(name, deps = [], test_deps = None):
    """A pure plan `name` (name.cc, name.h: index math, no MPI) and, when
    test_deps is given (possibly []), its unit test name_test.cc."""
    native.cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        deps = _union(["//distconv:core"], deps),
    )
    if test_deps != None:
        cc_unit_test(
            name = name + "_test",
            srcs = [name + "_test.cc"],
            deps = _union([":" + name, "//distconv:core"], test_deps),
        )
