#include "kernels/local_interpolate.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/halo_layout.h"
#include "distconv/internal/target_clones.h"
#include "kernels/copy_view.h"
#include "kernels/internal/interpolate_rows.h"
#include "kernels/internal/strided_runs.h"

namespace distconv {
namespace {

// The row walk (kernels/internal/interpolate_rows.h).
using internal::cell_corners;
using internal::Corners;
using internal::dense_row;
using internal::dense_row_backward;
using internal::each_row;
using internal::extend;
using internal::Row;
using internal::scatter_cell;
using internal::sum_cell;

// Rows a forward keeps widened: twice the most an output row reads (4
// outer corners, 3D), so that the previous output row's stay for the next.
constexpr int kWideRows = 8;

// Rows of a 16-bit input widened to float, a few at a time: the rows the
// output rows being computed read, each converted once while consecutive
// output rows read it (a float's value is the 16-bit one exactly).
template <typename T>
class WideRows {
 public:
  // Up to `slots` rows of `length` values.
  WideRows(int slots, Index length)
      : length_(length),
        buffer_(static_cast<size_t>(slots * length)),
        source_(static_cast<size_t>(slots), nullptr),
        used_(static_cast<size_t>(slots), 0) {}
  const float* data() const { return buffer_.data(); }
  // Starts the next output row: rows it already holds stay.
  void next() { ++tick_; }
  // The offset in data() of the row at `src`, widening it into a slot the
  // current output row does not use where it is not held.
  Index offset(const T* src) {
    int pick = -1;
    for (size_t s = 0; s < source_.size(); ++s) {
      if (source_[s] == src) {
        used_[s] = tick_;
        return static_cast<Index>(s) * length_;
      }
      if (used_[s] != tick_ &&
          (pick < 0 || used_[s] < used_[static_cast<size_t>(pick)])) {
        pick = static_cast<int>(s);
      }
    }
    float* to = buffer_.data() + pick * length_;
    convert(src, static_cast<size_t>(length_), to);
    source_[static_cast<size_t>(pick)] = src;
    used_[static_cast<size_t>(pick)] = tick_;
    return pick * length_;
  }

 private:
  Index length_;
  std::vector<float> buffer_;
  std::vector<const T*> source_;
  std::vector<long> used_;
  long tick_ = 1;
};

template <typename T>
[[gnu::always_inline]] inline void forward_loops(
    const StridedView<const T>& x, const std::vector<LocalTaps>& taps,
    const StridedView<T>& y) {
  const Index channels = y.extent()[1];
  const Index xc = x.strides()[1], yc = y.strides()[1];
  // Each channel's sum over the corners in corner order.
  std::vector<double> sums(static_cast<size_t>(channels));
  double* v = sums.data();
  // A 16-bit type's channels-last rows: the input rows widened to float,
  // the output row's sums as floats rounded to T by convert() (both vector
  // code) once the row is done.
  const Index in_row = x.extent()[x.ndims() - 1] * channels;
  const Index out_row = y.extent()[y.ndims() - 1] * channels;
  std::optional<WideRows<T>> wide;
  std::vector<float> row_sums;
  if constexpr (kNarrow<T>) {
    if (xc == 1 && yc == 1) {
      wide.emplace(kWideRows, in_row);
      row_sums.resize(static_cast<size_t>(out_row));
    }
  }
  each_row(
      x.strides(), y.extent(), y.strides(),
      taps, [&](const Row& r) __attribute__((always_inline)) {
        const T* base = x.data() + r.n * x.strides()[0];
        T* out = y.data() + r.n * y.strides()[0] + r.at;
        const int j = r.outer.count;
        if (xc == 1 && yc == 1 && (j == 1 || j == 2 || j == 4)) {
          if constexpr (kNarrow<T>) {
            if (r.in_stride == channels && r.out_stride == channels) {
              Row w = r;
              wide->next();
              for (int i = 0; i < j; ++i) {
                w.outer.offset[i] = wide->offset(base + r.outer.offset[i]);
              }
              dense_row(wide->data(), w, row_sums.data(), channels, channels,
                        v);
              convert(row_sums.data(), static_cast<size_t>(r.length * channels),
                      out);
              return;
            }
          }
          dense_row(base, r, out, r.out_stride, channels, v);
          return;
        }
        for (Index c = 0; c < r.length; ++c) {
          sum_cell(base, xc, cell_corners(r.outer, *r.taps, c, r.in_stride),
                   out + c * r.out_stride, yc, channels, v);
        }
      });
}

// Row r of the backward: its gradients times their weights added into
// their corners at `base` (channel stride xc). `wide_row`: room for a
// 16-bit gradient's channels-last row widened to float (vector code)
// before it is read; empty: read as it is.
template <typename G, typename P>
[[gnu::always_inline]] inline void backward_row(const StridedView<const G>& dy,
                                                const Row& r, P* base, Index xc,
                                                std::vector<float>& wide_row) {
  const Index channels = dy.extent()[1], gc = dy.strides()[1];
  const G* g = dy.data() + r.n * dy.strides()[0] + r.at;
  const int j = r.outer.count;
  if (gc == 1 && xc == 1 && (j == 1 || j == 2 || j == 4)) {
    if constexpr (kNarrow<G>) {
      if (r.out_stride == channels && !wide_row.empty()) {
        convert(g, static_cast<size_t>(r.length * channels), wide_row.data());
        dense_row_backward(static_cast<const float*>(wide_row.data()), channels,
                           r, base, channels);
        return;
      }
    }
    dense_row_backward(g, r.out_stride, r, base, channels);
    return;
  }
  for (Index c = 0; c < r.length; ++c) {
    scatter_cell(base, xc, cell_corners(r.outer, *r.taps, c, r.in_stride),
                 g + c * r.out_stride, gc, channels);
  }
}

// Room for a row of dy widened to float where a 16-bit dy and its input
// gradient (channel stride xc) are channels-last.
template <typename G>
std::vector<float> wide_row_for(const StridedView<const G>& dy, Index xc) {
  if (!kNarrow<G> || dy.strides()[1] != 1 || xc != 1) return {};
  return std::vector<float>(
      static_cast<size_t>(dy.extent()[dy.ndims() - 1] * dy.extent()[1]));
}

template <typename G, typename P>
[[gnu::always_inline]] inline void backward_loops(
    const StridedView<const G>& dy, const std::vector<LocalTaps>& taps,
    const StridedView<P>& dx) {
  const Index xc = dx.strides()[1];
  std::vector<float> wide_row = wide_row_for(dy, xc);
  each_row(
      dx.strides(), dy.extent(), dy.strides(),
      taps, [&](const Row& r) __attribute__((always_inline)) {
        backward_row(dy, r, dx.data() + r.n * dx.strides()[0], xc, wide_row);
      });
}

// Whether backward_into's window of slices applies: 2D or 3D, dx
// channels-last and dense past its first spatial dimension, the first
// spatial dimension's taps non-decreasing, inside dx, each output's two
// at most one apart (so that two slices hold every cell an output row
// adds to).
template <typename T>
bool window_applies(const StridedView<T>& dx,
                    const std::vector<LocalTaps>& taps) {
  const int k = static_cast<int>(taps.size());
  if (k < 2 || k > 3 || dx.strides()[1] != 1) return false;
  Index inner = dx.extent()[1];
  for (int d = dx.ndims() - 1; d >= 3; --d) {
    if (dx.strides()[d] != inner) return false;
    inner *= dx.extent()[d];
  }
  const LocalTaps& t = taps[0];
  for (size_t o = 0; o < t.i0.size(); ++o) {
    if (t.i0[o] < 0 || t.i1[o] < t.i0[o] || t.i1[o] > t.i0[o] + 1 ||
        t.i1[o] >= dx.extent()[2] || (o > 0 && t.i0[o] < t.i0[o - 1])) {
      return false;
    }
  }
  return true;
}

// backward_into where window_applies: per sample, the output rows in
// order of the first spatial dimension add into a window of two slices of
// dx's first spatial dimension (sums in P, zeroed as a slice enters); a
// slice no later output reads is rounded into dx (zeros for one no output
// reads). Each cell gets the sums backward_loops would give, in the same
// order.
template <typename T, typename P>
[[gnu::always_inline]] inline void window_loops(
    const StridedView<const T>& dy, const std::vector<LocalTaps>& taps,
    const StridedView<T>& dx, std::vector<P>& window) {
  const int k = static_cast<int>(taps.size()), last = dx.ndims() - 1;
  Index slice = dx.extent()[1];
  for (int d = last; d >= 3; --d) slice *= dx.extent()[d];
  window.resize(static_cast<size_t>(2 * slice));
  std::vector<float> wide_row = wide_row_for(dy, 1);
  const LocalTaps one = internal::unit_taps();
  const LocalTaps& outer = taps[0];
  const LocalTaps& middle = k == 3 ? taps[1] : one;
  const Index mid_in = k == 3 ? dx.strides()[3] : 0;
  const Index mid_out = k == 3 ? dy.strides()[3] : 0;
  const Index mid_extent = k == 3 ? dy.extent()[3] : 1;
  const Corners start = internal::origin_corner();
  Row row = internal::row_along(taps[k - 1], dx.strides()[last],
                                dy.strides()[last], dy.extent()[last]);
  for (Index n = 0; n < dx.extent()[0]; ++n) {
    T* out = dx.data() + n * dx.strides()[0];
    std::array<Index, 2> held = {-1, -1};  // the slice in each slot
    const auto slot = [&](Index i) { return window.data() + (i % 2) * slice; };
    Index done = 0;  // the slices before it are in dx
    const auto finish = [&](Index i) {
      T* to = out + i * dx.strides()[2];
      if (held[i % 2] != i) {
        std::fill_n(to, slice, T(0));
        return;
      }
      held[i % 2] = -1;
      if constexpr (std::is_same_v<T, P>) {
        std::copy_n(slot(i), slice, to);
      } else {
        convert(slot(i), static_cast<size_t>(slice), to);
      }
    };
    const auto hold = [&](Index i) {
      if (held[i % 2] == i) return;
      std::fill_n(slot(i), slice, P(0));
      held[i % 2] = i;
    };
    row.n = n;
    for (Index a = 0; a < dy.extent()[2]; ++a) {
      const Index i0 = outer.i0[a], i1 = outer.i1[a];
      while (done < i0) finish(done++);
      hold(i0);
      hold(i1);
      const Corners pa =
          extend(start, i0 % 2, i1 % 2, outer.w0[a], outer.w1[a], slice);
      for (Index b = 0; b < mid_extent; ++b) {
        row.outer = extend(pa, middle.i0[b], middle.i1[b], middle.w0[b],
                           middle.w1[b], mid_in);
        row.at = a * dy.strides()[2] + b * mid_out;
        backward_row(dy, row, window.data(), 1, wide_row);
      }
    }
    while (done < dx.extent()[2]) finish(done++);
  }
}

// The loops compiled per instruction set (DISTCONV_CLONES), one overload
// per element type; no FMA contraction, so each clone gives the same bits.
#define DISTCONV_LOOPS(T)                                                 \
  DISTCONV_CLONES void forward_of(const StridedView<const T>& x,          \
                                  const std::vector<LocalTaps>& taps,     \
                                  const StridedView<T>& y) {              \
    forward_loops(x, taps, y);                                            \
  }                                                                       \
  DISTCONV_CLONES void backward_of(const StridedView<const T>& dy,        \
                                   const std::vector<LocalTaps>& taps,    \
                                   const StridedView<Compute<T>>& dx) {   \
    backward_loops(dy, taps, dx);                                         \
  }                                                                       \
  DISTCONV_CLONES void window_of(                                         \
      const StridedView<const T>& dy, const std::vector<LocalTaps>& taps, \
      const StridedView<T>& dx, std::vector<Compute<T>>& window) {        \
    window_loops(dy, taps, dx, window);                                   \
  }
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_LOOPS)
#undef DISTCONV_LOOPS

}  // namespace

template <typename T>
void LocalInterpolate<T>::forward(StridedView<const T> x,
                                  const std::vector<LocalTaps>& taps,
                                  StridedView<T> y) {
  forward_of(x, taps, y);
}

template <typename T>
void LocalInterpolate<T>::backward(StridedView<const T> dy,
                                   const std::vector<LocalTaps>& taps,
                                   StridedView<Compute<T>> dx) {
  backward_of(dy, taps, dx);
}

template <typename T>
void LocalInterpolate<T>::backward_into(StridedView<const T> dy,
                                        const std::vector<LocalTaps>& taps,
                                        StridedView<T> dx,
                                        std::vector<Compute<T>>& scratch) {
  if (window_applies(dx, taps)) {
    window_of(dy, taps, dx, scratch);
    return;
  }
  // Elsewhere: the sums into dx zeroed (float, double) or into a zeroed
  // fp32 copy (16-bit types), rounded into dx.
  using P = Compute<T>;
  if constexpr (std::is_same_v<T, P>) {
    T* base = dx.data();
    internal::for_each_run<1>(dx.extent(), {dx.strides()},
                              [&](const std::array<Index, 1>& at, Index len,
                                  const std::array<Index, 1>& step) {
                                for (Index i = 0; i < len; ++i)
                                  base[at[0] + i * step[0]] = T(0);
                              });
    if (dy.size() > 0) backward_of(dy, taps, dx);
  } else {
    scratch.assign(static_cast<size_t>(dx.size()), P(0));
    const StridedView<P> sums(
        scratch.data(), dx.extent(),
        dense_strides(dx.extent(), StorageOrder::kChannelsLast));
    if (dy.size() > 0) backward_of(dy, taps, sums);
    copy_view<P, T>(sums, dx);
  }
}

#define DISTCONV_INSTANTIATE(T) template struct LocalInterpolate<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
