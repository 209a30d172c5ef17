// The GPU benchmarks' timer: the median seconds of `op` queued `reps` times
// between two CUDA events on the legacy default stream, over 5 rounds,
// after one warm-up call.
//
//   const double t = time_of([&] { kernel(...); }, 30);
#ifndef DISTCONV_PERF_CUDA_TIMING_H_
#define DISTCONV_PERF_CUDA_TIMING_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "distconv/internal/cuda_check.h"

namespace distconv {

template <typename Op>
double time_of(Op op, int reps) {
  using internal::check_cuda;
  cudaEvent_t a, b;
  check_cuda(cudaEventCreate(&a), "cudaEventCreate");
  check_cuda(cudaEventCreate(&b), "cudaEventCreate");
  op();  // warm up
  std::vector<double> t;
  for (int round = 0; round < 5; ++round) {
    check_cuda(cudaEventRecord(a, nullptr), "cudaEventRecord");
    for (int r = 0; r < reps; ++r) op();
    check_cuda(cudaEventRecord(b, nullptr), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    t.push_back(ms * 1e-3 / reps);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace distconv

#endif  // DISTCONV_PERF_CUDA_TIMING_H_
