// LocalGroupNorm<T>: the per-(sample, channel) passes of a group (or
// instance) normalisation over one rank's shard, an (N, C, spatial...)
// strided view (channels-last: the channel loops are contiguous). The
// distributed layer (layers/group_norm.h) adds the per-group combination
// and the reductions across ranks.
//
// Per-(sample, channel) arrays hold N * C doubles, entry n * C + c. Sums
// accumulate in double whatever T; the elementwise passes compute in
// double and round each result to T (bf16 and fp16 through float, as the
// library's other 16-bit passes).
//
//   LocalGroupNorm<float>::sums(x, sums);              // sum x per (n, c)
//   LocalGroupNorm<float>::deviations(x, mean, m2);    // sum (x - mean)^2
//   LocalGroupNorm<float>::affine(x, mean, a, b, y);   // (x - mean) a + b
//
// Outputs may alias inputs exactly (y == x, dx == dy or x).
#ifndef DISTCONV_KERNELS_LOCAL_GROUP_NORM_H_
#define DISTCONV_KERNELS_LOCAL_GROUP_NORM_H_

#include "distconv/bf16.h"
#include "distconv/fp16.h"
#include "distconv/strided_view.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h.
template <typename T>
struct LocalGroupNorm {
  // sums[n * C + c] = the sum of x(n, c, ...) over the cells.
  static void sums(StridedView<const T> x, double* sums);
  // m2[n * C + c] = the sum of (x(n, c, ...) - mean[n * C + c])^2.
  static void deviations(StridedView<const T> x, const double* mean,
                         double* m2);
  // y = (x - mean[n * C + c]) * a[n * C + c] + b[n * C + c].
  static void affine(StridedView<const T> x, const double* mean,
                     const double* a, const double* b, StridedView<T> y);
  // sum_dy[n * C + c] = the sum of dy, sum_dy_dev[n * C + c] the sum of
  // dy * (x - mean[n * C + c]).
  static void gradient_sums(StridedView<const T> x, StridedView<const T> dy,
                            const double* mean, double* sum_dy,
                            double* sum_dy_dev);
  // dx = dy * a + (x - mean) * b + c, per (n, c) factors.
  static void diff_src(StridedView<const T> x, StridedView<const T> dy,
                       const double* mean, const double* a, const double* b,
                       const double* c, StridedView<T> dx);
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_GROUP_NORM_H_
