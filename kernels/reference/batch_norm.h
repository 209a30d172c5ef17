// Reference batch normalisation: plain loops over dense row-major
// (N, C, spatial...) arrays (NCHW, NCDHW, or any number of spatial
// dimensions), accumulating in double; the oracle of the distributed
// batch normalisation's tests. Statistics are per channel over everything
// the array holds (all N samples, all spatial positions): a test applies
// these functions to whichever block of the global tensor a statistics
// scope covers.
//
//   y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + shift[c]
//
// with mean and the biased variance var (divided by the count) of the
// channel. Training normalises with the batch's own statistics (two-pass:
// the mean, then the sum of squared deviations from it); inference with
// given (running) statistics. Backward, with count n and x^ the normalised
// input:
//
//   diff_shift[c] = sum dy,   diff_scale[c] = sum dy * x^
//   training:   dx = scale / sigma * (dy - diff_shift / n - x^ * diff_scale /
//   n) inference:  dx = scale / sigma * dy
//
// Per-channel arrays (scale, shift, mean, var, diff_scale, diff_shift)
// hold C entries; outputs are overwritten. An array with no elements
// (N or a spatial extent 0) gives mean 0 and variance 0 and diff_scale =
// diff_shift = 0.
//
//   const Shape x{2, 16, 32, 32};
//   std::vector<double> mean(16), var(16);
//   reference::batch_norm_fwd_training(x, src, scale, shift, 1e-5, dst,
//                                      mean.data(), var.data());
#ifndef DISTCONV_KERNELS_REFERENCE_BATCH_NORM_H_
#define DISTCONV_KERNELS_REFERENCE_BATCH_NORM_H_

#include "distconv/shape.h"

namespace distconv::reference {

// mean and biased variance per channel (two-pass, double).
template <typename T>
void batch_norm_stats(const Shape& shape, const T* src, double* mean,
                      double* variance);

// Normalises with the array's own statistics, which it also writes to
// mean / variance (biased) unless those are null.
template <typename T>
void batch_norm_fwd_training(const Shape& shape, const T* src, const T* scale,
                             const T* shift, double epsilon, T* dst,
                             double* mean = nullptr,
                             double* variance = nullptr);

// Normalises with the given statistics.
template <typename T>
void batch_norm_fwd_inference(const Shape& shape, const T* src, const T* scale,
                              const T* shift, const double* mean,
                              const double* variance, double epsilon, T* dst);

// The gradient of batch_norm_fwd_training (statistics recomputed from src).
template <typename T>
void batch_norm_bwd_training(const Shape& shape, const T* src,
                             const T* diff_dst, const T* scale, double epsilon,
                             T* diff_src, T* diff_scale, T* diff_shift);

// The gradient of batch_norm_fwd_inference (the statistics are constants).
template <typename T>
void batch_norm_bwd_inference(const Shape& shape, const T* src,
                              const T* diff_dst, const T* scale,
                              const double* mean, const double* variance,
                              double epsilon, T* diff_src, T* diff_scale,
                              T* diff_shift);

// One training step's update of running statistics from a batch of
// `count` values per channel with the given mean and biased variance, as
// PyTorch does: running = (1 - momentum) * running + momentum * batch, the
// variance unbiased (times count / (count - 1)). Nothing changes with
// count 0; with count 1 only the mean (the unbiased variance is undefined).
void batch_norm_update_running(Index channels, Index count, const double* mean,
                               const double* variance, double momentum,
                               double* running_mean, double* running_variance);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_BATCH_NORM_H_
