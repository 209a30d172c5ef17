#include "kernels/reference/group_norm.h"

#include <cmath>
#include <vector>

namespace distconv::reference {
namespace {

struct Dims {
  Index n, c, s;  // samples, channels, cells per sample and channel
};

Dims dims_of(const Shape& shape) {
  Index s = 1;
  for (int d = 2; d < shape.ndims(); ++d) s *= shape[d];
  return {shape[0], shape[1], s};
}

double at(const double* p, Index i) { return p ? p[i] : 0.0; }
double scale_at(const double* p, Index i) { return p ? p[i] : 1.0; }

// Per (n, g): mean and biased variance (two-pass).
void stats(const Dims& d, Index groups, const double* x, double* mean,
           double* var) {
  const Index size = d.c / groups;
  for (Index n = 0; n < d.n; ++n) {
    for (Index g = 0; g < groups; ++g) {
      double sum = 0;
      for (Index c = g * size; c < (g + 1) * size; ++c) {
        for (Index i = 0; i < d.s; ++i) sum += x[(n * d.c + c) * d.s + i];
      }
      const double m = sum / static_cast<double>(size * d.s);
      double sq = 0;
      for (Index c = g * size; c < (g + 1) * size; ++c) {
        for (Index i = 0; i < d.s; ++i) {
          const double v = x[(n * d.c + c) * d.s + i] - m;
          sq += v * v;
        }
      }
      mean[n * groups + g] = m;
      var[n * groups + g] = sq / static_cast<double>(size * d.s);
    }
  }
}

}  // namespace

void group_norm_fwd(const Shape& shape, Index groups, const double* src,
                    const double* scale, const double* shift, double epsilon,
                    double* dst, double* mean, double* variance) {
  const Dims d = dims_of(shape);
  std::vector<double> m(d.n * groups), v(d.n * groups);
  stats(d, groups, src, m.data(), v.data());
  const Index size = d.c / groups;
  for (Index n = 0; n < d.n; ++n) {
    for (Index c = 0; c < d.c; ++c) {
      const Index g = n * groups + c / size;
      const double r = 1.0 / std::sqrt(v[g] + epsilon);
      for (Index i = 0; i < d.s; ++i) {
        const Index k = (n * d.c + c) * d.s + i;
        dst[k] = scale_at(scale, c) * (src[k] - m[g]) * r + at(shift, c);
      }
    }
  }
  for (Index i = 0; i < d.n * groups; ++i) {
    if (mean) mean[i] = m[i];
    if (variance) variance[i] = v[i];
  }
}

void group_norm_fwd_given(const Shape& shape, const double* src,
                          const double* scale, const double* shift,
                          const double* mean, const double* variance,
                          double epsilon, double* dst) {
  const Dims d = dims_of(shape);
  for (Index n = 0; n < d.n; ++n) {
    for (Index c = 0; c < d.c; ++c) {
      const double r = 1.0 / std::sqrt(variance[c] + epsilon);
      for (Index i = 0; i < d.s; ++i) {
        const Index k = (n * d.c + c) * d.s + i;
        dst[k] = scale_at(scale, c) * (src[k] - mean[c]) * r + at(shift, c);
      }
    }
  }
}

void group_norm_bwd(const Shape& shape, Index groups, const double* src,
                    const double* diff_dst, const double* scale,
                    double epsilon, double* diff_src, double* diff_scale,
                    double* diff_shift) {
  const Dims d = dims_of(shape);
  std::vector<double> m(d.n * groups), v(d.n * groups);
  stats(d, groups, src, m.data(), v.data());
  const Index size = d.c / groups;
  const double count = static_cast<double>(size * d.s);
  for (Index c = 0; c < d.c; ++c) diff_scale[c] = diff_shift[c] = 0;
  for (Index n = 0; n < d.n; ++n) {
    for (Index g = 0; g < groups; ++g) {
      const Index ng = n * groups + g;
      const double r = 1.0 / std::sqrt(v[ng] + epsilon);
      double s1 = 0, s2 = 0;  // sums of gd and gd * x^ over the group
      for (Index c = g * size; c < (g + 1) * size; ++c) {
        for (Index i = 0; i < d.s; ++i) {
          const Index k = (n * d.c + c) * d.s + i;
          const double xh = (src[k] - m[ng]) * r;
          const double gd = scale_at(scale, c) * diff_dst[k];
          s1 += gd;
          s2 += gd * xh;
          diff_scale[c] += diff_dst[k] * xh;
          diff_shift[c] += diff_dst[k];
        }
      }
      for (Index c = g * size; c < (g + 1) * size; ++c) {
        for (Index i = 0; i < d.s; ++i) {
          const Index k = (n * d.c + c) * d.s + i;
          const double xh = (src[k] - m[ng]) * r;
          const double gd = scale_at(scale, c) * diff_dst[k];
          diff_src[k] = r * (gd - s1 / count - xh * s2 / count);
        }
      }
    }
  }
}

}  // namespace distconv::reference
