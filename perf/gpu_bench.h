// distconv_bench --device=gpu: each driver's layer in GPU memory
// (LayerCase<T, DeviceSpace>, perf/layer_cases.h) on the grid of the
// options, rank r on GPU r % GPUs.
//  - correctness mode: the same layer in host memory on the same grid and
//    the same inputs and parameters; the gathered outputs (and the
//    parameters' gradients) compared on rank 0, PASS within the host
//    driver's bound for the problem;
//  - perf mode: the selected passes timed as on the host, each run ended
//    by a device synchronisation; --impl=cudnn times the cuDNN baseline
//    (perf/cudnn_baselines.h) instead, on the whole problem in one process.
// Called on every rank; errors are thrown alike on every rank. A build
// without --config=cuda, or a machine with no GPU, throws kUnsupported.
#ifndef DISTCONV_PERF_GPU_BENCH_H_
#define DISTCONV_PERF_GPU_BENCH_H_

#include "perf/bench_options.h"
#include "perf/bench_timing.h"
#include "perf/conv_problem.h"

namespace distconv {

BenchResult run_gpu_bench(const BenchOptions& o, const ConvProblem& p);

}  // namespace distconv

#endif  // DISTCONV_PERF_GPU_BENCH_H_
