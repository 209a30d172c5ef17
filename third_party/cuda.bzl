"""cuda_library: compiles .cu files with nvcc into a cc_library.

    load("//third_party:cuda.bzl", "cuda_library")
    cuda_library(name = "pack_kernels", srcs = ["pack.cu"], hdrs = ["pack.h"],
                 deps = [":shapes"])

Each .cu becomes one object (nvcc -std=c++17 -Xcompiler -fPIC, sm_90 = H100 /
H200), seen by the compiler with the headers, include paths and defines of
`hdrs` and `deps`. The cc_library links them with @cuda//:cudart.

Without --config=cuda the library is an empty cc_library (hdrs only) and
@cuda is never fetched, so `bazel build //...` works where CUDA is absent.
Other CUDA-only targets need both guards (Bazel 4.2.3 still fetches the deps
of an incompatible target, and fetching @cuda fails without /usr/local/cuda):
    cc_library(name = "cudnn_conv", srcs = [...],
               deps = if_cuda(["@cuda//:cudnn"]),
               target_compatible_with = CUDA_ONLY)
"""

NVCC = "/usr/local/cuda/bin/nvcc"
NVCC_FLAGS = [
    "-std=c++17",
    "-O3",
    "-Xcompiler",
    "-fPIC",
    "-gencode",
    "arch=compute_90,code=sm_90",
]

# For target_compatible_with: skipped by `bazel build //...` unless
# --config=cuda (an incompatible target is not built, and its tests not run).
CUDA_ONLY = select({
    "//third_party:cuda_enabled": [],
    "//conditions:default": ["//third_party:incompatible"],
})

def if_cuda(if_true, if_false = []):
    """`if_true` under --config=cuda, else `if_false`; use for @cuda deps."""
    return select({
        "//third_party:cuda_enabled": if_true,
        "//conditions:default": if_false,
    })

def _cuda_objects_impl(ctx):
    cc = [dep[CcInfo].compilation_context for dep in ctx.attr.deps]
    headers = depset(ctx.files.hdrs, transitive = [c.headers for c in cc])
    args = list(NVCC_FLAGS)
    for c in cc:
        args += ["-D" + d for d in c.defines.to_list()]
        args += ["-I" + i for i in c.includes.to_list()]
        args += ["-I" + i for i in c.quote_includes.to_list()]
        for i in c.system_includes.to_list():
            args += ["-isystem", i]
    args += ["-I.", "-I" + ctx.bin_dir.path]
    objects = []
    for src in ctx.files.srcs:
        obj = ctx.actions.declare_file(
            "_objs/%s/%s.pic.o" % (ctx.label.name, src.basename[:-len(".cu")]),
        )
        ctx.actions.run(
            executable = NVCC,
            arguments = args + ["-c", src.path, "-o", obj.path],
            inputs = depset([src], transitive = [headers]),
            outputs = [obj],
            mnemonic = "NvccCompile",
            progress_message = "Compiling CUDA %s" % src.short_path,
            use_default_shell_env = True,
        )
        objects.append(obj)
    return [DefaultInfo(files = depset(objects))]

_cuda_objects = rule(
    implementation = _cuda_objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = True),
        "deps": attr.label_list(providers = [CcInfo]),
    },
)

def cuda_library(name, srcs, hdrs = [], deps = [], **kwargs):
    cuda_deps = if_cuda(["@cuda//:cudart"])
    _cuda_objects(
        name = name + "_cu_objs",
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + cuda_deps,
        target_compatible_with = CUDA_ONLY,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        srcs = if_cuda([":" + name + "_cu_objs"]),
        hdrs = hdrs,
        deps = deps + cuda_deps,
        **kwargs
    )
