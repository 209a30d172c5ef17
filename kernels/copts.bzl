"""Compiler options of the host point-wise loops (kernels/internal/strided_runs.h and
the targets that include it)."""

# Point-wise loops carry `#pragma omp simd`.
POINTWISE_COPTS = [
    "-fopenmp-simd",
    # No FP exception semantics: lets GCC vectorise selects between two
    # computed values (leaky ReLU, its gradient) instead of branching.
    "-fno-trapping-math",
]
