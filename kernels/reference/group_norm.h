// Reference group normalisation: plain loops over a dense row-major
// (N, C, spatial...) array in double, the oracle of the distributed group
// and instance normalisation's tests. Each (sample, group) of C / groups
// channels is normalised with its own mean and biased variance (two-pass):
//
//   y = scale[c] * (x - mean[n, g]) / sqrt(var[n, g] + epsilon) + shift[c]
//
// Backward, with x^ the normalised input, M the values of a (sample,
// group), gd = scale[c] * dy:
//
//   dx = (gd - sum_group(gd) / M - x^ * sum_group(gd * x^) / M) / sigma
//   diff_scale[c] = sum over n, space of dy * x^,  diff_shift[c] = sum dy
//
// In inference (given per-channel statistics) dx = scale / sigma * dy.
// scale and shift may be null (1 and 0). mean and variance arrays hold
// N * groups entries.
#ifndef DISTCONV_KERNELS_REFERENCE_GROUP_NORM_H_
#define DISTCONV_KERNELS_REFERENCE_GROUP_NORM_H_

#include "distconv/shape.h"

namespace distconv::reference {

// Normalises with each (sample, group)'s statistics; writes them to mean
// and variance unless null.
void group_norm_fwd(const Shape& shape, Index groups, const double* src,
                    const double* scale, const double* shift, double epsilon,
                    double* dst, double* mean = nullptr,
                    double* variance = nullptr);
// Normalises with per-channel statistics (inference with running ones).
void group_norm_fwd_given(const Shape& shape, const double* src,
                          const double* scale, const double* shift,
                          const double* mean, const double* variance,
                          double epsilon, double* dst);
// The gradients of group_norm_fwd.
void group_norm_bwd(const Shape& shape, Index groups, const double* src,
                    const double* diff_dst, const double* scale,
                    double epsilon, double* diff_src, double* diff_scale,
                    double* diff_shift);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_GROUP_NORM_H_
