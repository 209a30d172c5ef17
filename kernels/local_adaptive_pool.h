// LocalAdaptivePool<T>: adaptive pooling's per-rank loops
// (layers/adaptive_pool.h) on a rank's shard, an (N, C, spatial...)
// strided view at global spatial corner `lower` of an input of spatial
// extent `in`, pooled to spatial extent `size` (distconv/adaptive_pool_desc.h
// has the windows). The forward loops give every output cell's partial
// result over the shard's part of its window (the layer combines them
// across ranks); the backward loops take the whole output gradient of the
// shard's samples and channels. Per-output arrays hold N * C * V entries,
// (n * C + c) * V + o for the o-th output cell in row-major order (V the
// output's spatial volume). Sums in double; results rounded once to T.
//
//   LocalAdaptivePool<float>::sums(x, lower, in, size, partial.data());
#ifndef DISTCONV_KERNELS_LOCAL_ADAPTIVE_POOL_H_
#define DISTCONV_KERNELS_LOCAL_ADAPTIVE_POOL_H_

#include <cstdint>

#include "distconv/bf16.h"
#include "distconv/fp16.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"

namespace distconv {

// A max-pooling candidate: a value and its cell's global flat spatial
// index (row-major); index < 0: none.
struct MaxCandidate {
  double value = 0;
  std::int64_t index = -1;
};
// The better of two candidates (commutative and associative, so it
// combines partial results in any order): a NaN beats every number, the
// later of two NaNs wins; among numbers the larger, the earlier of equals;
// none loses to anything. (PyTorch's CPU kernels scan a window in order
// keeping the last NaN, else the first maximum.)
MaxCandidate better(const MaxCandidate& a, const MaxCandidate& b);

// Defined for every element type of distconv/element_types.h.
template <typename T>
struct LocalAdaptivePool {
  // out[(n * C + c) * V + o] = the sum of x over o's window within the
  // shard.
  static void sums(StridedView<const T> x, const Shape& lower,
                   const Shape& in, const Shape& size, double* out);
  // out[...] = the best candidate of o's window within the shard.
  static void maxima(StridedView<const T> x, const Shape& lower,
                     const Shape& in, const Shape& size, MaxCandidate* out);
  // dx = the sum over the outputs whose windows hold the cell of their
  // gradient divided by their window's cell count (overwrites dx).
  static void average_backward(const double* dy, const Shape& lower,
                               const Shape& in, const Shape& size,
                               StridedView<T> dx);
  // dx = each output's gradient at its maximum's cell, where the shard
  // holds it, summed; 0 elsewhere (overwrites dx).
  static void max_backward(const double* dy, const std::int64_t* argmax,
                           const Shape& lower, const Shape& in,
                           const Shape& size, StridedView<T> dx);
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_ADAPTIVE_POOL_H_
