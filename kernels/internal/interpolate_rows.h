// The row walk shared by linear interpolation's loops
// (kernels/local_interpolate*.cc): an output's corners and weights, the
// rows of outputs along the last spatial dimension, and the channel loops
// that sum corners into an output or scatter a gradient into them (vector
// code where channels are contiguous). Included only by files built
// without FMA contraction (-ffp-contract=off), so that vector and scalar
// code give the same bits.
#ifndef DISTCONV_KERNELS_INTERNAL_INTERPOLATE_ROWS_H_
#define DISTCONV_KERNELS_INTERNAL_INTERPOLATE_ROWS_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "distconv/element_types.h"
#include "kernels/local_interpolate.h"

namespace distconv::internal {

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

// The taps of a dimension that is not there: one output reading input 0
// with weight 1.
inline LocalTaps unit_taps() {
  LocalTaps one;
  one.i0 = one.i1 = {0};
  one.w0 = {1.0};
  one.w1 = {0.0};
  return one;
}

// The corners before any dimension's taps: one, at offset 0, weight 1.
inline Corners origin_corner() {
  Corners start;
  start.count = 1;
  start.weight[0] = 1;
  return start;
}

// A row along the last spatial dimension with these taps, strides and
// length (n, at and outer set per row). The row points at `taps`, which
// must outlive it (no temporaries).
inline Row row_along(const LocalTaps&& taps, Index, Index, Index) = delete;
inline Row row_along(const LocalTaps& taps, Index in_stride, Index out_stride,
                     Index length) {
  Row row;
  row.taps = &taps;
  row.in_stride = in_stride;
  row.out_stride = out_stride;
  row.length = length;
  return row;
}

// Calls fn(row) for every row of outputs; spatial dimensions are padded
// to three in front (one output, one tap).
template <typename Fn>
[[gnu::always_inline]] inline void each_row(const Shape& in_strides,
                                            const Shape& out_extent,
                                            const Shape& out_strides,
                                            const std::vector<LocalTaps>& taps,
                                            Fn fn) {
  const int k = static_cast<int>(taps.size());
  const LocalTaps one = unit_taps();
  std::array<const LocalTaps*, 3> t{};
  std::array<Index, 3> in_s{}, out_s{}, ext{};
  for (int d = 0; d < 3; ++d) {
    const int from = d - (3 - k);
    t[d] = from >= 0 ? &taps[from] : &one;
    in_s[d] = from >= 0 ? in_strides[from + 2] : 0;
    out_s[d] = from >= 0 ? out_strides[from + 2] : 0;
    ext[d] = from >= 0 ? out_extent[from + 2] : 1;
  }
  const Corners start = origin_corner();
  Row row = row_along(*t[2], in_s[2], out_s[2], ext[2]);
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

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_INTERNAL_INTERPOLATE_ROWS_H_
