#include "kernels/local_upsample.h"

#include <type_traits>
#include <vector>

#include "distconv/element_types.h"
#include "kernels/internal/strided_runs.h"

namespace distconv {
namespace {

// A view (N, C, spatial...) with its spatial dimensions padded to three
// (leading extents of 1).
template <typename T>
struct View3 : UpsampleGeometry {
  T* data;

  explicit View3(const StridedView<T>& v)
      : UpsampleGeometry(upsample_geometry(v.extent(), v.strides())),
        data(v.data()) {}
  T* cell(Index in, Index i0, Index i1, Index i2) const {
    return data + offset(in, 0, i0, i1, i2);
  }
  bool empty() const { return volume() == 0; }
};

// y[0, count) = x[0, count), or y += x; elements `step` apart (converted
// to Y, where the types differ).
template <typename Y, typename X>
void copy_channels(Y* y, Index y_step, const X* x, Index x_step, Index count) {
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

}  // namespace

template <typename T>
void upsample_forward(const Exec<HostSpace>&, const UpsampleFactors& factors,
                      const StridedView<const T>& src,
                      const StridedView<T>& dst) {
  const View3<const T> x(src);
  const View3<T> y(dst);
  if (y.empty()) return;
  const std::int64_t* f = factors.f;
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
void upsample_backward(const Exec<HostSpace>&, const UpsampleFactors& factors,
                       const StridedView<const T>& diff_dst,
                       const StridedView<T>& diff_src) {
  const View3<const T> dy(diff_dst);
  const View3<T> dx(diff_src);
  if (dx.empty()) return;
  const std::int64_t* f = factors.f;
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

#define DISTCONV_INSTANTIATE(T)                            \
  template void upsample_forward<T>(                       \
      const Exec<HostSpace>&, const UpsampleFactors&,      \
      const StridedView<const T>&, const StridedView<T>&); \
  template void upsample_backward<T>(                      \
      const Exec<HostSpace>&, const UpsampleFactors&,      \
      const StridedView<const T>&, const StridedView<T>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
