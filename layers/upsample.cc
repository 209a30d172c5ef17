#include "layers/upsample.h"

#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/pointwise.h"

namespace distconv {
namespace {

// A view (N, C, spatial...) with its spatial dimensions padded to three
// (leading extents of 1).
template <typename T>
struct View3 {
  T* data;
  Index n, c, s[3];
  Index stride_n, stride_c, stride_s[3];

  explicit View3(const StridedView<T>& v) : data(v.data()) {
    const Shape& e = v.extent();
    const Shape& st = v.strides();
    n = e[0];
    c = e[1];
    stride_n = st[0];
    stride_c = st[1];
    const int k = v.ndims() - 2;
    for (int d = 0; d < 3; ++d) {
      const int from = d - (3 - k);
      s[d] = from >= 0 ? e[from + 2] : 1;
      stride_s[d] = from >= 0 ? st[from + 2] : 0;
    }
  }
  T* cell(Index in, Index i0, Index i1, Index i2) const {
    return data + in * stride_n + i0 * stride_s[0] + i1 * stride_s[1] +
           i2 * stride_s[2];
  }
  bool empty() const { return n * c * s[0] * s[1] * s[2] == 0; }
};

// y[0, count) = x[0, count), or y += x; elements `step` apart (converted
// to Y, where the types differ).
template <typename Y, typename X>
void copy_channels(Y* y, Index y_step, const X* x, Index x_step,
                   Index count) {
  if (y_step == 1 && x_step == 1) {
    internal::contiguous_run([](X v) { return Y(v); }, count, y, x);
  } else {
    for (Index i = 0; i < count; ++i) y[i * y_step] = Y(x[i * x_step]);
  }
}
template <typename Y, typename X>
void add_channels(Y* y, Index y_step, const X* x, Index x_step, Index count) {
  if (y_step == 1 && x_step == 1) {
    internal::contiguous_run([](Y a, X b) { return Y(a + b); }, count, y,
                             static_cast<const Y*>(y), x);
  } else {
    for (Index i = 0; i < count; ++i) {
      y[i * y_step] = Y(y[i * y_step] + x[i * x_step]);
    }
  }
}

// The factors padded to three spatial dimensions.
void factors3(const UpsampleDesc& desc, Index f[3]) {
  const int k = desc.spatial_dims();
  for (int d = 0; d < 3; ++d) {
    f[d] = d >= 3 - k ? desc.factors[d - (3 - k)] : 1;
  }
}

ShardPlan planned(const ProcessGrid& grid, const UpsampleDesc& desc,
                  const Distribution& src) {
  internal::check_grid(src, grid.shape(), "upsample:");
  return plan_upsample(desc, src, grid.rank());
}

}  // namespace

template <typename T>
Upsample<T>::Upsample(const ProcessGrid& grid, const UpsampleDesc& desc,
                      const Distribution& src)
    : desc_(desc), plan_(planned(grid, desc, src)) {}

template <typename T>
Upsample<T>::Upsample(const ProcessGrid& grid, const UpsampleDesc& desc,
                      ShardPlan plan)
    : desc_(desc), plan_(std::move(plan)) {
  internal::check_given_shard_plan(
      grid, plan_, internal::element_name<T>(), [&] {
    return plan_upsample(desc_, src_distribution(), plan_.rank);
  });
}

template <typename T>
void Upsample<T>::forward(const DistTensor<T>& src, DistTensor<T>& dst) const {
  internal::require_distribution(src, src_distribution(), "upsample: src");
  internal::require_distribution(dst, dst_distribution(), "upsample: dst");
  const View3<const T> x(src.interior());
  const View3<T> y(dst.interior());
  if (y.empty()) return;
  Index f[3];
  factors3(desc_, f);
  for (Index n = 0; n < y.n; ++n)
  for (Index o0 = 0; o0 < y.s[0]; ++o0)
  for (Index o1 = 0; o1 < y.s[1]; ++o1) {
    for (Index o2 = 0; o2 < y.s[2]; ++o2) {
      copy_channels(y.cell(n, o0, o1, o2), y.stride_c,
                    x.cell(n, o0 / f[0], o1 / f[1], o2 / f[2]), x.stride_c,
                    y.c);
    }
  }
}

template <typename T>
void Upsample<T>::backward(const DistTensor<T>& diff_dst,
                           DistTensor<T>& diff_src) const {
  internal::require_distribution(diff_dst, dst_distribution(),
                                 "upsample: diff_dst");
  internal::require_distribution(diff_src, src_distribution(),
                                 "upsample: diff_src");
  const View3<const T> dy(diff_dst.interior());
  const View3<T> dx(diff_src.interior());
  if (dx.empty()) return;
  Index f[3];
  factors3(desc_, f);
  // Each input cell sums its block in row-major order (k0, k1, k2); the
  // block's output rows are read one after the other. bf16 sums a row of
  // input cells in fp32 (channels-last, `row`), rounded once into dx.
  using P = Compute<T>;
  constexpr bool kStaged = !std::is_same_v<T, P>;
  std::vector<P> row(kStaged ? dx.s[2] * dx.c : 0);
  for (Index n = 0; n < dx.n; ++n)
  for (Index i0 = 0; i0 < dx.s[0]; ++i0)
  for (Index i1 = 0; i1 < dx.s[1]; ++i1) {
    for (Index k0 = 0; k0 < f[0]; ++k0)
    for (Index k1 = 0; k1 < f[1]; ++k1) {
      const bool first_row = k0 == 0 && k1 == 0;
      for (Index i2 = 0; i2 < dx.s[2]; ++i2) {
        P* to;
        Index to_step;
        if constexpr (kStaged) {
          to = row.data() + i2 * dx.c;
          to_step = 1;
        } else {
          to = dx.cell(n, i0, i1, i2);
          to_step = dx.stride_c;
        }
        for (Index k2 = 0; k2 < f[2]; ++k2) {
          const T* from =
              dy.cell(n, i0 * f[0] + k0, i1 * f[1] + k1, i2 * f[2] + k2);
          if (first_row && k2 == 0) {
            copy_channels(to, to_step, from, dy.stride_c, dx.c);
          } else {
            add_channels(to, to_step, from, dy.stride_c, dx.c);
          }
        }
      }
    }
    if constexpr (kStaged) {
      for (Index i2 = 0; i2 < dx.s[2]; ++i2) {
        copy_channels(dx.cell(n, i0, i1, i2), dx.stride_c,
                      row.data() + i2 * dx.c, 1, dx.c);
      }
    }
  }
}

template class Upsample<float>;
template class Upsample<double>;
template class Upsample<bf16>;

}  // namespace distconv
