#include "kernels/reference/batch_norm.h"

#include <cmath>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"

namespace distconv::reference {
namespace {

struct Extents {
  Index samples, channels, spatial;  // spatial: product of dims 2..
  Index count() const { return samples * spatial; }  // values per channel
  // Offset of value i (0 <= i < count()) of channel c.
  Index at(Index c, Index i) const {
    return ((i / spatial) * channels + c) * spatial + i % spatial;
  }
};

Extents extents(const Shape& shape) {
  require(shape.ndims() >= 2, ErrorKind::kInvalidArgument,
          "batch normalisation needs (N, C, spatial...), got shape ", shape);
  for (Index e : shape) {
    require(e >= 0, ErrorKind::kInvalidArgument, "shape ", shape,
            " has a negative extent");
  }
  Index spatial = 1;
  for (int d = 2; d < shape.ndims(); ++d) spatial *= shape[d];
  return {shape[0], shape[1], spatial};
}

double inv_std(double variance, double epsilon) {
  return 1.0 / std::sqrt(variance + epsilon);
}

// Sums of dy and dy * (x - mean) over channel c.
template <typename T>
void gradient_sums(const Extents& e, Index c, const T* src, const T* diff_dst,
                   double mean, double* sum_dy, double* sum_dy_dev) {
  double a = 0, b = 0;
  for (Index i = 0; i < e.count(); ++i) {
    const Index o = e.at(c, i);
    a += double(diff_dst[o]);
    b += double(diff_dst[o]) * (double(src[o]) - mean);
  }
  *sum_dy = a;
  *sum_dy_dev = b;
}

}  // namespace

template <typename T>
void batch_norm_stats(const Shape& shape, const T* src, double* mean,
                      double* variance) {
  const Extents e = extents(shape);
  const Index n = e.count();
  for (Index c = 0; c < e.channels; ++c) {
    double sum = 0;
    for (Index i = 0; i < n; ++i) sum += double(src[e.at(c, i)]);
    const double m = n > 0 ? sum / double(n) : 0.0;
    double squares = 0;
    for (Index i = 0; i < n; ++i) {
      const double d = double(src[e.at(c, i)]) - m;
      squares += d * d;
    }
    mean[c] = m;
    variance[c] = n > 0 ? squares / double(n) : 0.0;
  }
}

template <typename T>
void batch_norm_fwd_inference(const Shape& shape, const T* src, const T* scale,
                              const T* shift, const double* mean,
                              const double* variance, double epsilon, T* dst) {
  const Extents e = extents(shape);
  for (Index c = 0; c < e.channels; ++c) {
    const double s = inv_std(variance[c], epsilon);
    for (Index i = 0; i < e.count(); ++i) {
      const Index o = e.at(c, i);
      dst[o] = static_cast<T>(
          double(scale[c]) * (double(src[o]) - mean[c]) * s + double(shift[c]));
    }
  }
}

template <typename T>
void batch_norm_fwd_training(const Shape& shape, const T* src, const T* scale,
                             const T* shift, double epsilon, T* dst,
                             double* mean, double* variance) {
  const Extents e = extents(shape);
  std::vector<double> m(e.channels), v(e.channels);
  batch_norm_stats(shape, src, m.data(), v.data());
  batch_norm_fwd_inference(shape, src, scale, shift, m.data(), v.data(),
                           epsilon, dst);
  for (Index c = 0; c < e.channels; ++c) {
    if (mean != nullptr) mean[c] = m[c];
    if (variance != nullptr) variance[c] = v[c];
  }
}

template <typename T>
void batch_norm_bwd_training(const Shape& shape, const T* src,
                             const T* diff_dst, const T* scale, double epsilon,
                             T* diff_src, T* diff_scale, T* diff_shift) {
  const Extents e = extents(shape);
  std::vector<double> m(e.channels), v(e.channels);
  batch_norm_stats(shape, src, m.data(), v.data());
  const double n = double(e.count());
  for (Index c = 0; c < e.channels; ++c) {
    const double s = inv_std(v[c], epsilon);
    double sum_dy = 0, sum_dy_dev = 0;
    gradient_sums(e, c, src, diff_dst, m[c], &sum_dy, &sum_dy_dev);
    const double sum_dy_xhat = sum_dy_dev * s;
    diff_shift[c] = static_cast<T>(sum_dy);
    diff_scale[c] = static_cast<T>(sum_dy_xhat);
    for (Index i = 0; i < e.count(); ++i) {
      const Index o = e.at(c, i);
      const double xhat = (double(src[o]) - m[c]) * s;
      diff_src[o] = static_cast<T>(
          double(scale[c]) * s *
          (double(diff_dst[o]) - sum_dy / n - xhat * sum_dy_xhat / n));
    }
  }
}

template <typename T>
void batch_norm_bwd_inference(const Shape& shape, const T* src,
                              const T* diff_dst, const T* scale,
                              const double* mean, const double* variance,
                              double epsilon, T* diff_src, T* diff_scale,
                              T* diff_shift) {
  const Extents e = extents(shape);
  for (Index c = 0; c < e.channels; ++c) {
    const double s = inv_std(variance[c], epsilon);
    double sum_dy = 0, sum_dy_dev = 0;
    gradient_sums(e, c, src, diff_dst, mean[c], &sum_dy, &sum_dy_dev);
    diff_shift[c] = static_cast<T>(sum_dy);
    diff_scale[c] = static_cast<T>(sum_dy_dev * s);
    for (Index i = 0; i < e.count(); ++i) {
      const Index o = e.at(c, i);
      diff_src[o] = static_cast<T>(double(scale[c]) * s * double(diff_dst[o]));
    }
  }
}

void batch_norm_update_running(Index channels, Index count, const double* mean,
                               const double* variance, double momentum,
                               double* running_mean, double* running_variance) {
  if (count == 0) return;
  for (Index c = 0; c < channels; ++c) {
    running_mean[c] = (1 - momentum) * running_mean[c] + momentum * mean[c];
    if (count > 1) {
      const double unbiased = variance[c] * double(count) / double(count - 1);
      running_variance[c] =
          (1 - momentum) * running_variance[c] + momentum * unbiased;
    }
  }
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template void batch_norm_stats<T>(const Shape&, const T*, double*, double*); \
  template void batch_norm_fwd_training<T>(const Shape&, const T*, const T*,   \
                                           const T*, double, T*, double*,      \
                                           double*);                           \
  template void batch_norm_fwd_inference<T>(const Shape&, const T*, const T*,  \
                                            const T*, const double*,           \
                                            const double*, double, T*);        \
  template void batch_norm_bwd_training<T>(const Shape&, const T*, const T*,   \
                                           const T*, double, T*, T*, T*);      \
  template void batch_norm_bwd_inference<T>(                                   \
      const Shape&, const T*, const T*, const T*, const double*,               \
      const double*, double, T*, T*, T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
