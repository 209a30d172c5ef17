"""The targets of one layer and of one plan, written once.

distconv_layer: a distributed layer's libraries and tests.

    distconv_layer(
        name = "pooling",
        impl = "pooling_impl",
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

Each library depends on what the layers use in common (LAYER_DEPS, and
DEVICE_DEPS for the GPU's) and on `impl`, the layer's template shared by
both memory spaces (a target of //layers/internal), when given; each test
on the layer and what the tests of its kind use in common (LAYER_TEST_DEPS,
DEVICE_TEST_DEPS). The deps given add what is particular to the layer.
Every library compiles with POINTWISE_COPTS (loops with `#pragma omp
simd`). The dicts `test` and `device_test` take mpi_cc_test's arguments
(deps, ranks, timeout_s, size, ...); `device` takes deps.

distconv_plan: a pure plan (name.cc, name.h; no MPI) on the core, and its
unit test name_test.cc when test_deps is given.

distconv_layers_test: a test of several host layers at once (name.cc, or
srcs, under mpirun) on every host layer (:host_layers) and what the host
layer tests use in common.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")
load("//tests:mpi_test.bzl", "cc_unit_test", "mpi_cc_test")
load("//kernels:copts.bzl", "POINTWISE_COPTS")
load("//third_party:cuda.bzl", "CUDA_ONLY", "if_cuda")

# What the layers in host memory use in common: the core vocabulary, the
# grid, tensors, the pimpl of its plan, the checks, MPI, the point-wise
# loops and the plans made beforehand.
LAYER_DEPS = [
    "//distconv:core",
    "//distconv:dist_tensor",
    "//distconv:pimpl",
    "//distconv:process_grid",
    "//distconv/internal:layer_checks",
    "//distconv/internal:mpi_util",
    "//layers:layer_stats",
    "//layers:shard_plan",
    "//layers/internal:given_plan",
    "//layers/internal:plan_fingerprints",
    "//layers/internal:pointwise",
    "@mpi",
]

# What the layers in GPU memory use in common besides.
DEVICE_DEPS = [
    "//distconv:device_space",
    "//distconv/internal:cuda_check",
    "//halo:device_transport",
    "//layers:layer_stats",
    "//kernels/cuda:space_ops",
]

# What the host layer tests use in common: tensors, the comparison with
# the serial reference, the layouts and shards to try and the MPI test
# helpers.
LAYER_TEST_DEPS = [
    "//distconv:dist_tensor",
    "//tests:conv_check",
    "//tests:layer_testing",
    "//tests:layout_cases",
    "//tests:mpi_testing",
    "//tests:shard_testing",
]

# What the GPU layer tests use in common.
DEVICE_TEST_DEPS = [
    ":device_layer_testing",
    "//distconv:device_space",
    "//distconv:dist_tensor",
    "//distconv:process_grid",
    "//tests:conv_check",
    "//tests:layer_testing",
    "//tests:mpi_testing",
    "//tests:shard_testing",
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
        impl = None,
        deps = [],
        device = None,
        test = None,
        device_test = None):
    """The layer `name`'s libraries and tests (see the file's docstring)."""
    impl_deps = ["//layers/internal:" + impl] if impl != None else []
    native.cc_library(
        name = name,
        alwayslink = True,  # whole in libdistconv.so (install/BUILD)
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        copts = POINTWISE_COPTS,
        deps = _union(LAYER_DEPS, impl_deps, deps),
    )
    if device != None:
        native.cc_library(
            name = "device_" + name,
            srcs = ["device_%s.cc" % name],
            copts = POINTWISE_COPTS,
            target_compatible_with = CUDA_ONLY,
            deps = _union(
                [":" + name],
                DEVICE_DEPS,
                impl_deps,
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

def distconv_layers_test(name, srcs = None, deps = [], **kwargs):
    """A test of several layers (see the file's docstring); kwargs are
    mpi_cc_test's."""
    mpi_cc_test(
        name = name,
        srcs = srcs if srcs != None else [name + ".cc"],
        deps = _union(LAYER_TEST_DEPS, [":host_layers"], deps),
        **kwargs
    )
