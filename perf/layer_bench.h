// distconv_bench's --pool, --deconv, --bnorm, --gnorm, --interp and
// --eltwise drivers: the distributed pooling, transposed convolution,
// batch and group normalisation, linear interpolation and
// communication-free layers checked against the reference kernels
// (correctness mode) or timed (perf mode), and their oneDNN baselines
// (--impl=onednn: the whole problem in one process). Each is called on
// every rank; errors are thrown alike on every rank.
#ifndef DISTCONV_PERF_LAYER_BENCH_H_
#define DISTCONV_PERF_LAYER_BENCH_H_

#include "distconv/interpolate_desc.h"
#include "distconv/pool_desc.h"
#include "distconv/shape.h"
#include "perf/bench_options.h"
#include "perf/bench_timing.h"
#include "perf/conv_problem.h"

namespace distconv {

// Pooling of o.alg: forward (fwd) and backward (bwd_d).
BenchResult run_pool_bench(const BenchOptions& o, const ConvProblem& p);
// Transposed convolution with bias: forward, backward-data,
// backward-weights. The oneDNN baseline runs oneDNN's deconvolution
// primitives (OnednnDeconvBaseline).
BenchResult run_deconv_bench(const BenchOptions& o, const ConvProblem& p);
// Batch normalisation (global statistics, scale and shift): training
// forward (fwd) and backward (bwd_d). The oneDNN baseline runs oneDNN's
// batch normalisation primitives on the tensor stored channels-last.
BenchResult run_bnorm_bench(const BenchOptions& o, const ConvProblem& p);
// Group normalisation (p.desc.groups groups, scale and shift): training
// forward (fwd) and backward (bwd_d); the distconv layer only.
BenchResult run_gnorm_bench(const BenchOptions& o, const ConvProblem& p);
// Linear interpolation to twice the size (interp_desc): forward (fwd) and
// backward (bwd_d), buffers with halos or in place (o.input); the distconv
// layer only.
BenchResult run_interp_bench(const BenchOptions& o, const ConvProblem& p);
// The layers with no communication (o.eltwise_alg): forward (fwd) and
// backward (bwd_d). The oneDNN baseline runs oneDNN's eltwise, binary,
// concat (and reorders for its backward) and resampling primitives.
BenchResult run_eltwise_bench(const BenchOptions& o, const ConvProblem& p);

// What each driver's GFLOP/s counts. Pooling: window cells visited per
// output, per pass run.
double pool_operations(const PoolDesc& d, const Shape& dst, BenchDir dir);
// Batch normalisation: floating-point operations per element, forward 7
// (the sum, the squared deviation, then subtract, scale, shift), backward
// 9 (the two sums, then the five terms of dx).
double bnorm_flops(const Shape& shape, BenchDir dir);
// --interp's description: each spatial extent doubled, align_corners no.
InterpolateDesc interp_desc(const Shape& src_shape);
// --interp: a multiply and an add per corner of each output, per pass.
double interp_operations(const InterpolateDesc& d, const Shape& src,
                         BenchDir dir);
// --eltwise: one operation per output value per pass.
double eltwise_operations(EltwiseAlg alg, const Shape& src, BenchDir dir);

// --bnorm's epsilon.
inline constexpr double kBnormEpsilon = 1e-5;

}  // namespace distconv

#endif  // DISTCONV_PERF_LAYER_BENCH_H_
