#include "kernels/local_interpolate.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/internal/target_clones.h"

namespace distconv {
namespace {

// Up to 8 corners of an output cell: offsets from the input view's (n, 0)
// and weights.
struct Corners {
  int count = 0;
  std::array<Index, 8> offset{};
  std::array<double, 8> weight{};
};

// The corners of `p` (those of an output's first dimensions' taps)
// extended by the next dimension's taps, low then high: the corners in
// the order of a mask whose first dimension is the most significant bit,
// each weight the product of its taps' weights in dimension order. A tap
// of weight 0 adds no corner (its products would all be 0).
[[gnu::always_inline]] inline Corners extend(const Corners& p, Index i0,
                                             Index i1, double w0, double w1,
                                             Index stride) {
  Corners out;
  for (int j = 0; j < p.count; ++j) {
    if (w0 != 0) {
      out.offset[out.count] = p.offset[j] + i0 * stride;
      out.weight[out.count++] = p.weight[j] * w0;
    }
    if (w1 != 0) {
      out.offset[out.count] = p.offset[j] + i1 * stride;
      out.weight[out.count++] = p.weight[j] * w1;
    }
  }
  return out;
}

// The corners of output cell c of a row whose earlier dimensions' corners
// are `p`: extended by the last dimension's taps `t` (input stride
// `stride`), corners of weight 0 left out (also a product of nonzero
// weights that underflows).
[[gnu::always_inline]] inline Corners cell_corners(const Corners& p,
                                                   const LocalTaps& t, Index c,
                                                   Index stride) {
  Corners out = extend(p, t.i0[c], t.i1[c], t.w0[c], t.w1[c], stride);
  int kept = 0;
  for (int j = 0; j < out.count; ++j) {
    if (out.weight[j] == 0) continue;
    out.offset[kept] = out.offset[j];
    out.weight[kept++] = out.weight[j];
  }
  out.count = kept;
  return out;
}

// One row of outputs along the last spatial dimension: sample n, the
// output offset of its first cell, the corners of its earlier dimensions'
// taps, the last dimension's taps and strides.
struct Row {
  Index n, at;
  Corners outer;
  const LocalTaps* taps;
  Index in_stride, out_stride, length;
};

// Calls fn(row) for every row of outputs; spatial dimensions are padded
// to three in front (one output, one tap).
template <typename Fn>
[[gnu::always_inline]] inline void each_row(const Shape& in_strides,
                                            const Shape& out_extent,
                                            const Shape& out_strides,
                                            const std::vector<LocalTaps>& taps,
                                            Fn fn) {
  const int k = static_cast<int>(taps.size());
  LocalTaps one;
  one.i0 = one.i1 = {0};
  one.w0 = {1.0};
  one.w1 = {0.0};
  std::array<const LocalTaps*, 3> t{};
  std::array<Index, 3> in_s{}, out_s{}, ext{};
  for (int d = 0; d < 3; ++d) {
    const int from = d - (3 - k);
    t[d] = from >= 0 ? &taps[from] : &one;
    in_s[d] = from >= 0 ? in_strides[from + 2] : 0;
    out_s[d] = from >= 0 ? out_strides[from + 2] : 0;
    ext[d] = from >= 0 ? out_extent[from + 2] : 1;
  }
  Corners start;
  start.count = 1;
  start.weight[0] = 1;
  Row row;
  row.taps = t[2];
  row.in_stride = in_s[2];
  row.out_stride = out_s[2];
  row.length = ext[2];
  for (Index n = 0; n < out_extent[0]; ++n) {
    row.n = n;
    for (Index a = 0; a < ext[0]; ++a) {
      const Corners pa = extend(start, t[0]->i0[a], t[0]->i1[a], t[0]->w0[a],
                                t[0]->w1[a], in_s[0]);
      for (Index b = 0; b < ext[1]; ++b) {
        row.outer = extend(pa, t[1]->i0[b], t[1]->i1[b], t[1]->w0[b],
                           t[1]->w1[b], in_s[1]);
        row.at = a * out_s[0] + b * out_s[1];
        fn(static_cast<const Row&>(row));
      }
    }
  }
}

// The channel loops. Unit strides run as vector code (omp simd); the
// file is built without FMA contraction, so vector and scalar code give
// the same bits.
// v[ch] += w * p[ch] for every channel.
template <typename T>
[[gnu::always_inline]] inline void accumulate(double* v, const T* p,
                                              Index stride, double w,
                                              Index channels) {
  if (stride == 1) {
#pragma omp simd
    for (Index ch = 0; ch < channels; ++ch) v[ch] += w * double(p[ch]);
  } else {
    for (Index ch = 0; ch < channels; ++ch) {
      v[ch] += w * double(p[ch * stride]);
    }
  }
}

// v rounded to T: to float first for the 16-bit types (whose values are
// made from floats), so a 16-bit output has the bits of a float output
// converted.
template <typename T>
[[gnu::always_inline]] inline T rounded(double v) {
  if constexpr (kNarrow<T>) {
    return T(static_cast<float>(v));
  } else {
    return T(v);
  }
}

// *out = v rounded; a 16-bit value stored as its bits (a copy of the
// object itself keeps GCC from vectorising the loop).
template <typename T>
[[gnu::always_inline]] inline void put(T* out, double v) {
  if constexpr (kNarrow<T>) {
    const std::uint16_t bits = rounded<T>(v).bits();
    std::memcpy(out, &bits, sizeof bits);
  } else {
    *out = T(v);
  }
}

// out[ch] = v[ch], rounded, for every channel.
template <typename T>
[[gnu::always_inline]] inline void store(T* out, Index stride, const double* v,
                                         Index channels) {
  if (stride == 1) {
#pragma omp simd
    for (Index ch = 0; ch < channels; ++ch) put(out + ch, v[ch]);
  } else {
    for (Index ch = 0; ch < channels; ++ch) put(out + ch * stride, v[ch]);
  }
}

// p[ch] += w * g[ch] for every channel, each sum rounded to P.
template <typename P, typename G>
[[gnu::always_inline]] inline void add_scaled(P* p, Index ps, const G* g,
                                              Index gs, double w,
                                              Index channels) {
  if (ps == 1 && gs == 1) {
#pragma omp simd
    for (Index ch = 0; ch < channels; ++ch) {
      p[ch] = rounded<P>(double(p[ch]) + w * double(g[ch]));
    }
  } else {
    for (Index ch = 0; ch < channels; ++ch) {
      p[ch * ps] = rounded<P>(double(p[ch * ps]) + w * double(g[ch * gs]));
    }
  }
}

// out[ch] = the cell's corners' weighted sum (from 0, in corner order),
// rounded, for every channel: one loop over the channels per corner, any
// strides (`xs` the input's channel stride, `os` the output's). `v`:
// scratch of `channels` doubles.
template <typename S, typename O>
[[gnu::always_inline]] inline void sum_cell(const S* base, Index xs,
                                            const Corners& cs, O* out, Index os,
                                            Index channels, double* v) {
  for (Index ch = 0; ch < channels; ++ch) v[ch] = 0;
  for (int i = 0; i < cs.count; ++i) {
    accumulate(v, base + cs.offset[i], xs, cs.weight[i], channels);
  }
  store(out, os, v, channels);
}

// The cell's gradient g (channel stride gs) times each corner's weight
// added into the corners at `base` (channel stride ps), any strides.
template <typename P, typename G>
[[gnu::always_inline]] inline void scatter_cell(P* base, Index ps,
                                                const Corners& cs, const G* g,
                                                Index gs, Index channels) {
  for (int i = 0; i < cs.count; ++i) {
    add_scaled(base + cs.offset[i], ps, g, gs, cs.weight[i], channels);
  }
}

// out[ch] = the sum over the K corners p[i] of w[i] * p[i][ch] (from 0,
// in corner order), rounded, for every channel of unit stride: each
// channel's sum stays in a register across the corners.
template <int K, typename T, typename O>
[[gnu::always_inline]] inline void sum_corners(const T* const* p,
                                               const double* w, O* out,
                                               Index channels) {
#pragma omp simd
  for (Index ch = 0; ch < channels; ++ch) {
    double v = 0;
#pragma GCC unroll 8
    for (int i = 0; i < K; ++i) v += w[i] * double(p[i][ch]);
    put(out + ch, v);
  }
}

// p[i][ch] += w[i] * g[ch] for the K corners in order, each sum rounded
// to P, for every channel of unit stride (two corners may be one cell).
template <int K, typename P, typename G>
[[gnu::always_inline]] inline void scatter_corners(P* const* p, const double* w,
                                                   const G* g, Index channels) {
#pragma omp simd
  for (Index ch = 0; ch < channels; ++ch) {
    const double gv = double(g[ch]);
#pragma GCC unroll 8
    for (int i = 0; i < K; ++i) {
      p[i][ch] = rounded<P>(double(p[i][ch]) + w[i] * gv);
    }
  }
}

// Output cell c of a row whose outer corners number J (channels-last):
// calls fn(K, p, w) with its K corners (as cell_corners gives them) at
// `base`, K a std::integral_constant (J or 2 * J). False, without the
// call, where a product of weights underflowed to 0 or both taps weigh 0
// (the caller takes cell_corners).
template <int J, typename S, typename Fn>
[[gnu::always_inline]] inline bool with_corners(S* base, const Row& r, Index c,
                                                Fn fn) {
  const LocalTaps& t = *r.taps;
  const double w0 = t.w0[c], w1 = t.w1[c];
  S* p[2 * J];
  double w[2 * J];
  int k = 0;
  for (int j = 0; j < J; ++j) {
    S* at = base + r.outer.offset[j];
    if (w0 != 0) {
      p[k] = at + t.i0[c] * r.in_stride;
      w[k++] = r.outer.weight[j] * w0;
    }
    if (w1 != 0) {
      p[k] = at + t.i1[c] * r.in_stride;
      w[k++] = r.outer.weight[j] * w1;
    }
  }
  for (int i = 0; i < k; ++i) {
    if (w[i] == 0) return false;
  }
  if (k == 2 * J) {
    fn(std::integral_constant<int, 2 * J>{}, p, w);
  } else if (k == J) {
    fn(std::integral_constant<int, J>{}, p, w);
  } else {
    return false;
  }
  return true;
}

// For every cell c of row r (channels-last, 1, 2 or 4 outer corners):
// dense(c, K, p, w) with its corners at `base` (with_corners), or
// general(c) where with_corners declines.
template <typename S, typename Dense, typename General>
[[gnu::always_inline]] inline void each_dense_cell(S* base, const Row& r,
                                                   Dense dense,
                                                   General general) {
  const int j = r.outer.count;
  for (Index c = 0; c < r.length; ++c) {
    const auto fn = [&](auto k, auto* const* p, const double* w)
        __attribute__((always_inline)) {
      dense(c, k, p, w);
    };
    if ((j == 2 && with_corners<2>(base, r, c, fn)) ||
        (j == 1 && with_corners<1>(base, r, c, fn)) ||
        (j == 4 && with_corners<4>(base, r, c, fn))) {
      continue;
    }
    general(c);
  }
}

// The cells of row r (channels-last, 1, 2 or 4 outer corners) from the
// input at `base` into out (cell c at out + c * out_stride; O is T, or
// float for a 16-bit T: the values before their last rounding). `v`:
// scratch of `channels` doubles.
template <typename S, typename O>
[[gnu::always_inline]] inline void dense_row(const S* base, const Row& r,
                                             O* out, Index out_stride,
                                             Index channels, double* v) {
  each_dense_cell(
      base, r,
      [&](Index c, auto k, const S* const* p,
          const double* w) __attribute__((always_inline)) {
        sum_corners<decltype(k)::value>(p, w, out + c * out_stride, channels);
      },
      [&](Index c) {
        sum_cell(base, 1, cell_corners(r.outer, *r.taps, c, r.in_stride),
                 out + c * out_stride, 1, channels, v);
      });
}

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

// The cells of row r (channels-last, 1, 2 or 4 outer corners): each
// gradient (cell c at g + c * g_stride) times its corners' weights added
// into the corners at `base`.
template <typename G, typename P>
[[gnu::always_inline]] inline void dense_row_backward(const G* g,
                                                      Index g_stride,
                                                      const Row& r, P* base,
                                                      Index channels) {
  each_dense_cell(
      base, r,
      [&](Index c, auto k, P* const* p,
          const double* w) __attribute__((always_inline)) {
        scatter_corners<decltype(k)::value>(p, w, g + c * g_stride, channels);
      },
      [&](Index c) {
        scatter_cell(base, 1, cell_corners(r.outer, *r.taps, c, r.in_stride),
                     g + c * g_stride, 1, channels);
      });
}

template <typename G, typename P>
[[gnu::always_inline]] inline void backward_loops(
    const StridedView<const G>& dy, const std::vector<LocalTaps>& taps,
    const StridedView<P>& dx) {
  const Index channels = dy.extent()[1];
  const Index gc = dy.strides()[1], xc = dx.strides()[1];
  // A 16-bit gradient's channels-last rows widened to float (vector code)
  // before they are read.
  std::vector<float> wide_row;
  if constexpr (kNarrow<G>) {
    if (gc == 1 && xc == 1) {
      wide_row.resize(
          static_cast<size_t>(dy.extent()[dy.ndims() - 1] * channels));
    }
  }
  each_row(
      dx.strides(), dy.extent(), dy.strides(),
      taps, [&](const Row& r) __attribute__((always_inline)) {
        const G* g = dy.data() + r.n * dy.strides()[0] + r.at;
        P* base = dx.data() + r.n * dx.strides()[0];
        const int j = r.outer.count;
        if (gc == 1 && xc == 1 && (j == 1 || j == 2 || j == 4)) {
          if constexpr (kNarrow<G>) {
            if (r.out_stride == channels) {
              convert(g, static_cast<size_t>(r.length * channels),
                      wide_row.data());
              dense_row_backward(static_cast<const float*>(wide_row.data()),
                                 channels, r, base, channels);
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
      });
}

// The loops compiled per instruction set (DISTCONV_CLONES), one overload
// per element type; no FMA contraction, so each clone gives the same bits.
#define DISTCONV_LOOPS(T)                                               \
  DISTCONV_CLONES void forward_of(const StridedView<const T>& x,        \
                                  const std::vector<LocalTaps>& taps,   \
                                  const StridedView<T>& y) {            \
    forward_loops(x, taps, y);                                          \
  }                                                                     \
  DISTCONV_CLONES void backward_of(const StridedView<const T>& dy,      \
                                   const std::vector<LocalTaps>& taps,  \
                                   const StridedView<Compute<T>>& dx) { \
    backward_loops(dy, taps, dx);                                       \
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

#define DISTCONV_INSTANTIATE(T) template struct LocalInterpolate<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
