// distconv_bench's --pool, --deconv, --bnorm and --eltwise drivers: the
// distributed pooling, transposed convolution, batch normalisation and
// communication-free layers checked against
// the reference kernels (correctness mode) or timed (perf mode), and their
// oneDNN baselines (--impl=onednn: the whole problem in one process). Each
// is called on every rank; errors are thrown alike on every rank.
#ifndef DISTCONV_PERF_LAYER_BENCH_H_
#define DISTCONV_PERF_LAYER_BENCH_H_

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
// The layers with no communication (o.eltwise_alg): forward (fwd) and
// backward (bwd_d). The oneDNN baseline runs oneDNN's eltwise, binary,
// concat (and reorders for its backward) and resampling primitives.
BenchResult run_eltwise_bench(const BenchOptions& o, const ConvProblem& p);

}  // namespace distconv

#endif  // DISTCONV_PERF_LAYER_BENCH_H_
