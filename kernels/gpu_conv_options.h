// How a GPU convolution kernel is chosen and what arithmetic it may use: a
// small header with no CUDA include, so that layer options can carry it in
// every build.
#ifndef DISTCONV_KERNELS_GPU_CONV_OPTIONS_H_
#define DISTCONV_KERNELS_GPU_CONV_OPTIONS_H_

#include <cstddef>
#include <memory>

#include "kernels/gpu_algo_cache.h"

namespace distconv {

// fp32 only (fp64 is always exact fp64).
enum class GpuMath {
  kStrict,  // fp32 multiply-adds (CUDA cores): matches the CPU to ~1e-6
  kTf32,    // tensor cores with inputs rounded to TF32 (10-bit mantissa)
};

enum class GpuAlgoSearch {
  // cuDNN's heuristics: no run at plan time; the same shapes give the same
  // algorithm on every rank.
  kHeuristic,
  // cuDNN times its algorithms on scratch buffers when the kernel is made,
  // each rank on its own pieces; the layers then run, for each problem,
  // the fastest algorithm any rank chose for it (the same shapes run the
  // same algorithm on every rank).
  kMeasured,
};

struct GpuConvOptions {
  GpuMath math = GpuMath::kStrict;
  GpuAlgoSearch search = GpuAlgoSearch::kHeuristic;
  // Largest workspace an algorithm may use, in bytes.
  std::size_t workspace_limit = std::size_t{1} << 30;
  // With kMeasured: the searches' results to reuse and add to, shared by
  // the layers given the same cache (kernels/gpu_algo_cache.h); none by
  // default (each layer times its own pieces).
  std::shared_ptr<GpuAlgoCache> cache;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_GPU_CONV_OPTIONS_H_
