#include "kernels/local_interpolate.h"

#include <array>
#include <cstdint>
#include <cstring>
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
// each weight the product of its taps' weights in dimension order.
[[gnu::always_inline]] inline Corners extend(const Corners& p, Index i0,
                                             Index i1, double w0, double w1,
                                             Index stride) {
  Corners out;
  for (int j = 0; j < p.count; ++j) {
    out.offset[out.count] = p.offset[j] + i0 * stride;
    out.weight[out.count++] = p.weight[j] * w0;
    out.offset[out.count] = p.offset[j] + i1 * stride;
    out.weight[out.count++] = p.weight[j] * w1;
  }
  return out;
}

// Calls fn(n, output offset, corners) for every output cell; spatial
// dimensions are padded to three in front (one output, one tap). Corners
// of weight 0 are left out.
template <typename Fn>
[[gnu::always_inline]] inline void each_output(
    const Shape& in_strides, const Shape& out_extent, const Shape& out_strides,
    const std::vector<LocalTaps>& taps, Fn fn) {
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
  for (Index n = 0; n < out_extent[0]; ++n) {
    for (Index a = 0; a < ext[0]; ++a) {
      const Corners pa = extend(start, t[0]->i0[a], t[0]->i1[a], t[0]->w0[a],
                                t[0]->w1[a], in_s[0]);
      for (Index b = 0; b < ext[1]; ++b) {
        const Corners pb = extend(pa, t[1]->i0[b], t[1]->i1[b], t[1]->w0[b],
                                  t[1]->w1[b], in_s[1]);
        for (Index c = 0; c < ext[2]; ++c) {
          const Corners pc = extend(pb, t[2]->i0[c], t[2]->i1[c], t[2]->w0[c],
                                    t[2]->w1[c], in_s[2]);
          Corners cs;
          for (int j = 0; j < pc.count; ++j) {
            if (pc.weight[j] == 0) continue;
            cs.offset[cs.count] = pc.offset[j];
            cs.weight[cs.count] = pc.weight[j];
            ++cs.count;
          }
          fn(n, a * out_s[0] + b * out_s[1] + c * out_s[2], cs);
        }
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

template <typename T>
[[gnu::always_inline]] inline void forward_loops(
    const StridedView<const T>& x, const std::vector<LocalTaps>& taps,
    const StridedView<T>& y) {
  const Index channels = y.extent()[1];
  const Index xc = x.strides()[1], yc = y.strides()[1];
  // Each channel's sum over the corners in corner order, as one loop over
  // the channels per corner.
  std::vector<double> sums(static_cast<size_t>(channels));
  double* v = sums.data();
  each_output(
      x.strides(), y.extent(), y.strides(), taps,
      [&](Index n, Index at, const Corners& cs) __attribute__((always_inline)) {
        const T* base = x.data() + n * x.strides()[0];
        T* out = y.data() + n * y.strides()[0] + at;
        for (Index ch = 0; ch < channels; ++ch) v[ch] = 0;
        for (int i = 0; i < cs.count; ++i) {
          accumulate(v, base + cs.offset[i], xc, cs.weight[i], channels);
        }
        store(out, yc, v, channels);
      });
}

template <typename G, typename P>
[[gnu::always_inline]] inline void backward_loops(
    const StridedView<const G>& dy, const std::vector<LocalTaps>& taps,
    const StridedView<P>& dx) {
  const Index channels = dy.extent()[1];
  const Index gc = dy.strides()[1], xc = dx.strides()[1];
  each_output(
      dx.strides(), dy.extent(), dy.strides(), taps,
      [&](Index n, Index at, const Corners& cs) __attribute__((always_inline)) {
        const G* g = dy.data() + n * dy.strides()[0] + at;
        P* base = dx.data() + n * dx.strides()[0];
        for (int i = 0; i < cs.count; ++i) {
          add_scaled(base + cs.offset[i], xc, g, gc, cs.weight[i], channels);
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
