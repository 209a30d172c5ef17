#include "kernels/local_group_norm.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "distconv/element_types.h"
#include "kernels/channel_cells.h"

namespace distconv {
namespace {

// Calls fn(n, at) for every (sample, spatial) cell of K views of one
// extent, `at` holding each view's offset of the cell's channel 0.
template <std::size_t K, typename Fn>
void each_cell(const Shape& extent, const std::array<Shape, K>& strides,
               Fn fn) {
  const CellWalk<K> w = cell_walk<K>(extent, strides);
  const std::int64_t cells = w.per_sample();
  if (w.cells() == 0) return;
  for (std::int64_t n = 0; n < w.samples; ++n) {
    for (std::int64_t i = 0; i < cells; ++i) {
      std::int64_t at[K];
      w.offsets(n, i, at);
      fn(n, at);
    }
  }
}

}  // namespace

template <typename T>
void LocalGroupNorm<T>::sums(StridedView<const T> x, double* sums) {
  const Index c = x.extent()[1], cs = x.strides()[1];
  std::fill(sums, sums + x.extent()[0] * c, 0.0);
  each_cell<1>(x.extent(), {x.strides()},
               [&](std::int64_t n, const std::int64_t* at) {
                 const T* p = x.data() + at[0];
                 double* s = sums + n * c;
                 for (Index k = 0; k < c; ++k) s[k] += double(p[k * cs]);
               });
}

template <typename T>
void LocalGroupNorm<T>::deviations(StridedView<const T> x, const double* mean,
                                   double* m2) {
  const Index c = x.extent()[1], cs = x.strides()[1];
  std::fill(m2, m2 + x.extent()[0] * c, 0.0);
  each_cell<1>(x.extent(), {x.strides()},
               [&](std::int64_t n, const std::int64_t* at) {
                 const T* p = x.data() + at[0];
                 const double* m = mean + n * c;
                 double* s = m2 + n * c;
                 for (Index k = 0; k < c; ++k) {
                   const double d = double(p[k * cs]) - m[k];
                   s[k] += d * d;
                 }
               });
}

template <typename T>
void LocalGroupNorm<T>::affine(StridedView<const T> x, const double* mean,
                               const double* a, const double* b,
                               StridedView<T> y) {
  const Index c = x.extent()[1], xs = x.strides()[1], ys = y.strides()[1];
  each_cell<2>(x.extent(), {x.strides(), y.strides()},
               [&](std::int64_t n, const std::int64_t* at) {
                 const T* p = x.data() + at[0];
                 T* q = y.data() + at[1];
                 const Index o = n * c;
                 for (Index k = 0; k < c; ++k) {
                   q[k * ys] = T((double(p[k * xs]) - mean[o + k]) * a[o + k] +
                                 b[o + k]);
                 }
               });
}

template <typename T>
void LocalGroupNorm<T>::gradient_sums(StridedView<const T> x,
                                      StridedView<const T> dy,
                                      const double* mean, double* sum_dy,
                                      double* sum_dy_dev) {
  const Index c = x.extent()[1], xs = x.strides()[1], ds = dy.strides()[1];
  std::fill(sum_dy, sum_dy + x.extent()[0] * c, 0.0);
  std::fill(sum_dy_dev, sum_dy_dev + x.extent()[0] * c, 0.0);
  each_cell<2>(x.extent(), {x.strides(), dy.strides()},
               [&](std::int64_t n, const std::int64_t* at) {
                 const T* p = x.data() + at[0];
                 const T* g = dy.data() + at[1];
                 const Index o = n * c;
                 for (Index k = 0; k < c; ++k) {
                   const double d = double(g[k * ds]);
                   sum_dy[o + k] += d;
                   sum_dy_dev[o + k] += d * (double(p[k * xs]) - mean[o + k]);
                 }
               });
}

template <typename T>
void LocalGroupNorm<T>::diff_src(StridedView<const T> x,
                                 StridedView<const T> dy, const double* mean,
                                 const double* a, const double* b,
                                 const double* c0, StridedView<T> dx) {
  const Index c = x.extent()[1], xs = x.strides()[1], ds = dy.strides()[1],
              os = dx.strides()[1];
  each_cell<3>(x.extent(), {x.strides(), dy.strides(), dx.strides()},
               [&](std::int64_t n, const std::int64_t* at) {
                 const T* p = x.data() + at[0];
                 const T* g = dy.data() + at[1];
                 T* q = dx.data() + at[2];
                 const Index o = n * c;
                 for (Index k = 0; k < c; ++k) {
                   const double v = double(g[k * ds]) * a[o + k] +
                                    (double(p[k * xs]) - mean[o + k]) *
                                        b[o + k] +
                                    c0[o + k];
                   q[k * os] = T(v);
                 }
               });
}

#define DISTCONV_INSTANTIATE(T) template struct LocalGroupNorm<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
