// Internal: the batch-norm loops' blocks (kernels/local_batch_norm.cc):
// eight doubles or sixteen floats (stored as float or bf16,
// kernels/internal/bf16_vectors.h) as GCC / Clang vector extensions that
// each target clone lowers to its own registers, unaligned loads, plain or
// non-temporal stores, and the elementwise passes' arithmetic on one
// block. Include it from one .cc only: it turns off the -Wpsabi note for
// the file (see below).
//
//   V8 v = load8(x) * a + b;           // x: eight doubles or floats
//   store8<Stores::kStreaming>(y, v);  // the caller fences after streaming
#ifndef DISTCONV_KERNELS_INTERNAL_BATCH_NORM_BLOCKS_H_
#define DISTCONV_KERNELS_INTERNAL_BATCH_NORM_BLOCKS_H_

#include <cstring>

#include "distconv/shape.h"
#include "kernels/internal/bf16_vectors.h"
#include "kernels/local_batch_norm.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define DISTCONV_INLINE inline __attribute__((always_inline))

namespace distconv::internal::batch_norm_blocks {

// Arithmetic on eight doubles at a time (GCC / Clang vector extensions,
// which each clone lowers to its own registers: one zmm, two ymm or four
// xmm). Loads and stores go through memcpy (unaligned); a block's values
// are all loaded before any is stored, so outputs may alias inputs.
// The helpers are always inlined, so the -Wpsabi note on passing 64-byte
// vectors by value (an ABI of real calls) does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef double V8 __attribute__((vector_size(64)));
typedef float F8 __attribute__((vector_size(32)));

DISTCONV_INLINE V8 load8(const double* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
DISTCONV_INLINE V8 load8(const float* p) {
  F8 v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, V8);
}
DISTCONV_INLINE void add8(double* p, const V8& v) {
  const V8 t = load8(p) + v;
  std::memcpy(p, &t, sizeof t);
}

// The reductions' accumulators as vectors of the CPU's width: V8 (one
// zmm) with AVX-512, V4 (one ymm) otherwise. GCC keeps a V8 that lives
// across loop iterations in memory where the CPU has no 64-byte
// registers, moving it through general registers element by element: on
// an AMD EPYC with AVX2 the moments ran at 2.3 GB/s that way
// (perf/batch_norm_passes_bench), a quarter of a read's speed.
typedef double V4 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));

// Eight or four doubles from p (doubles, or floats widened).
template <typename V>
DISTCONV_INLINE V load_v(const double* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename V>
DISTCONV_INLINE V load_v(const float* p) {
  if constexpr (sizeof(V) == sizeof(V8)) {
    return load8(p);
  } else {
    F4 v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, V4);
  }
}
template <typename V>
DISTCONV_INLINE V load_v(const bf16* p) {
  if constexpr (sizeof(V) == sizeof(V8)) {
    return __builtin_convertvector(widen_bf16<F8>(p), V8);
  } else {
    return __builtin_convertvector(widen_bf16<F4>(p), V4);
  }
}
template <typename V>
DISTCONV_INLINE void add_v(double* p, const V& v) {
  const V t = load_v<V>(p) + v;
  std::memcpy(p, &t, sizeof t);
}
// Doubles per V, and V's per 16-value block.
template <typename V>
inline constexpr int kLanes = int(sizeof(V) / sizeof(double));
template <typename V>
inline constexpr int kParts = 16 / kLanes<V>;

// How elementwise passes write: plain stores, or non-temporal ones.
enum class Stores { kPlain, kStreaming };

// Stores eight doubles; kStreaming: non-temporal (SSE2's movntps / movntpd,
// 16 aligned bytes each, in every clone), which skips reading the
// destination's cache lines before writing them: a third less memory
// traffic for outputs far larger than the cache. The caller fences.
template <Stores kStores>
DISTCONV_INLINE void store8(double* p, const V8& v) {
#if defined(__SSE2__)
  if (kStores == Stores::kStreaming) {
    for (int k = 0; k < 4; ++k) {
      __m128d h;
      std::memcpy(&h, reinterpret_cast<const char*>(&v) + 16 * k, 16);
      _mm_stream_pd(p + 2 * k, h);
    }
    return;
  }
#endif
  std::memcpy(p, &v, sizeof v);
}
DISTCONV_INLINE F8 load_f8(const float* p) {
  F8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
DISTCONV_INLINE F8 load_f8(const bf16* p) { return widen_bf16<F8>(p); }

// Sixteen floats at a time, for float's elementwise passes.
typedef float F16 __attribute__((vector_size(64)));

DISTCONV_INLINE F16 load16(const float* p) {
  F16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <Stores kStores>
DISTCONV_INLINE void store16(float* p, const F16& v) {
#if defined(__SSE2__)
  if (kStores == Stores::kStreaming) {
    for (int k = 0; k < 4; ++k) {
      __m128 h;
      std::memcpy(&h, reinterpret_cast<const char*>(&v) + 16 * k, 16);
      _mm_stream_ps(p + 4 * k, h);
    }
    return;
  }
#endif
  std::memcpy(p, &v, sizeof v);
}

// bf16: sixteen loaded as floats, sixteen floats stored rounded (32 bytes;
// kStreaming: non-temporal, 16 aligned bytes at a time).
DISTCONV_INLINE F16 load16(const bf16* p) { return widen_bf16<F16>(p); }
template <Stores kStores>
DISTCONV_INLINE void store16(bf16* p, const F16& v) {
  const U16x16 bits = round_bf16(v);
#if defined(__SSE2__)
  if (kStores == Stores::kStreaming) {
    for (int k = 0; k < 2; ++k) {
      __m128i h;
      std::memcpy(&h, reinterpret_cast<const char*>(&bits) + 16 * k, 16);
      _mm_stream_si128(reinterpret_cast<__m128i*>(p + 8 * k), h);
    }
    return;
  }
#endif
  std::memcpy(static_cast<void*>(p), &bits, sizeof bits);
}

// ReLU as the activation layer computes it (kernels/activation_ops.h):
// +0 where v <= 0, NaN passing through; and its gate, g where the
// normalised value z > above (ReluGate::above: 0, or the largest value a
// narrower output type rounds to +0), else +0 (NaN z gates to 0).
DISTCONV_INLINE V8 relu(const V8& v) {
  const V8 zero{};
  return v <= zero ? zero : v;
}
DISTCONV_INLINE F16 relu(const F16& v) {
  const F16 zero{};
  return v <= zero ? zero : v;
}
DISTCONV_INLINE double relu(double v) { return v <= 0 ? 0.0 : v; }
DISTCONV_INLINE float relu(float v) { return v <= 0 ? 0.0f : v; }
DISTCONV_INLINE V8 gate(const V8& z, const V8& g, double above) {
  const V8 zero{};
  return z > zero + above ? g : zero;
}
DISTCONV_INLINE F16 gate(const F16& z, const F16& g, float above) {
  const F16 zero{};
  return z > zero + above ? g : zero;
}
DISTCONV_INLINE V4 gate(const V4& z, const V4& g, double above) {
  const V4 zero{};
  return z > zero + above ? g : zero;
}
DISTCONV_INLINE F8 gate(const F8& z, const F8& g, float above) {
  const F8 zero{};
  return z > zero + above ? g : zero;
}
DISTCONV_INLINE double gate(double z, double g, double above) {
  return z > above ? g : 0.0;
}
DISTCONV_INLINE float gate(float z, float g, float above) {
  return z > above ? g : 0.0f;
}
// The two halves of sixteen floats as eight doubles each.
DISTCONV_INLINE void widen(const F16& v, V8* lo, V8* hi) {
  F8 h[2];
  std::memcpy(h, &v, sizeof h);
  *lo = __builtin_convertvector(h[0], V8);
  *hi = __builtin_convertvector(h[1], V8);
}

// The elementwise passes compute in T's precision, with the mean split in
// two: for float, mean = hi + lo exactly enough (hi = float(mean), lo =
// float(mean - hi)), and x - mean = (x - hi) - lo, whose first difference
// is exact when x is near the mean (Sterbenz) and otherwise much larger
// than lo, so the deviation keeps float precision even where the mean
// dwarfs it (1e4 + noise): no cancellation, at float's vector width.
// Double needs no split.

// y = (x - mean) * a + b, double; then ReLU for kRelu.
template <Stores kStores, NormActivation kAct = NormActivation::kNone>
struct AffineDouble {
  const double* x;
  double* y;
  const double *mean, *a, *b;
  struct Factors {
    V8 mean[2], a[2], b[2];
  };
  DISTCONV_INLINE Factors factors(Index j0) const {
    return {{load8(mean + j0), load8(mean + j0 + 8)},
            {load8(a + j0), load8(a + j0 + 8)},
            {load8(b + j0), load8(b + j0 + 8)}};
  }
  DISTCONV_INLINE void block(Index i, const Factors& f) const {
    V8 v[2];
    for (int h = 0; h < 2; ++h) {
      v[h] = (load8(x + i + 8 * h) - f.mean[h]) * f.a[h] + f.b[h];
      if constexpr (kAct == NormActivation::kRelu) v[h] = relu(v[h]);
    }
    for (int h = 0; h < 2; ++h) store8<kStores>(y + i + 8 * h, v[h]);
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    const double v = (x[i] - mean[j]) * a[j] + b[j];
    y[i] = kAct == NormActivation::kRelu ? relu(v) : v;
  }
};

// y = ((x - mean_hi) - mean_lo) * a + b, float, on x and y stored as S
// (float, or bf16: widened as loaded, rounded once as stored); then ReLU
// for kRelu.
template <typename S, Stores kStores, NormActivation kAct>
struct AffineIn32 {
  const S* x;
  S* y;
  const float *mean_hi, *mean_lo, *a, *b;
  struct Factors {
    F16 mean_hi, mean_lo, a, b;
  };
  DISTCONV_INLINE Factors factors(Index j0) const {
    return {load16(mean_hi + j0), load16(mean_lo + j0), load16(a + j0),
            load16(b + j0)};
  }
  DISTCONV_INLINE void block(Index i, const Factors& f) const {
    const F16 d = (load16(x + i) - f.mean_hi) - f.mean_lo;
    const F16 v = d * f.a + f.b;
    store16<kStores>(y + i, kAct == NormActivation::kRelu ? relu(v) : v);
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    const float v = ((float(x[i]) - mean_hi[j]) - mean_lo[j]) * a[j] + b[j];
    y[i] = S(kAct == NormActivation::kRelu ? relu(v) : v);
  }
};
template <Stores kStores, NormActivation kAct = NormActivation::kNone>
using AffineFloat = AffineIn32<float, kStores, kAct>;
template <Stores kStores, NormActivation kAct = NormActivation::kNone>
using AffineBf16 = AffineIn32<bf16, kStores, kAct>;

// The output gradient the normalisation's backward sees. Ungated: dy.
// Through a ReLU (the Relu* gates): dy where the forward's normalised
// value z was > 0, z recomputed from x with the forward's factors exactly
// as AffineDouble / AffineFloat computed it, so the gate is the forward's
// bit for bit.
template <typename T>
struct Ungated {
  const T* dy;
  // The block's 16 values of dy at i as kParts<V> vectors.
  template <typename V>
  DISTCONV_INLINE void dy16(const T*, Index i, Index, V* parts) const {
    for (int h = 0; h < kParts<V>; ++h) {
      parts[h] = load_v<V>(dy + i + kLanes<V> * h);
    }
  }
  DISTCONV_INLINE double dy1(const T*, Index i, Index) const {
    return double(dy[i]);
  }
};

struct ReluGateDouble {
  const double *dy, *mean, *a, *b;
  double above;
  template <typename V>
  DISTCONV_INLINE void dy16(const double* x, Index i, Index j0,
                            V* parts) const {
    for (int h = 0; h < kParts<V>; ++h) {
      const Index at = i + kLanes<V> * h, j = j0 + kLanes<V> * h;
      const V z = (load_v<V>(x + at) - load_v<V>(mean + j)) * load_v<V>(a + j) +
                  load_v<V>(b + j);
      parts[h] = gate(z, load_v<V>(dy + at), above);
    }
  }
  DISTCONV_INLINE double dy1(const double* x, Index i, Index j) const {
    return gate((x[i] - mean[j]) * a[j] + b[j], dy[i], above);
  }
};

// Float's gate on x and dy stored as S (float or bf16).
template <typename S>
struct ReluGateIn32 {
  const S* dy;
  const float *mean_hi, *mean_lo, *a, *b;
  float above;
  template <typename V>
  DISTCONV_INLINE void dy16(const S* x, Index i, Index j0, V* parts) const {
    if constexpr (sizeof(V) == sizeof(V8)) {
      const F16 d =
          (load16(x + i) - load16(mean_hi + j0)) - load16(mean_lo + j0);
      const F16 z = d * load16(a + j0) + load16(b + j0);
      widen(gate(z, load16(dy + i), above), &parts[0], &parts[1]);
    } else {
      // Eight floats (one ymm) at a time, each widened to two V4.
      for (int h = 0; h < 2; ++h) {
        const Index at = i + 8 * h, j = j0 + 8 * h;
        const F8 d =
            (load_f8(x + at) - load_f8(mean_hi + j)) - load_f8(mean_lo + j);
        const F8 g =
            gate(d * load_f8(a + j) + load_f8(b + j), load_f8(dy + at), above);
        F4 q[2];
        std::memcpy(q, &g, sizeof q);
        parts[2 * h] = __builtin_convertvector(q[0], V4);
        parts[2 * h + 1] = __builtin_convertvector(q[1], V4);
      }
    }
  }
  DISTCONV_INLINE double dy1(const S* x, Index i, Index j) const {
    const float z = ((float(x[i]) - mean_hi[j]) - mean_lo[j]) * a[j] + b[j];
    return double(gate(z, float(dy[i]), above));
  }
};

// dx = a * ((dy - dy_mean) - (x - mean) * k), double; for kRelu, dy gated
// by the forward's z = (x - mean) * relu_a + relu_b.
template <Stores kStores, NormActivation kAct = NormActivation::kNone>
struct DiffSrcDouble {
  const double *x, *dy;
  double* dx;
  const double *mean, *a, *dy_mean, *k, *relu_a, *relu_b;
  double above;  // the gate's (kRelu)
  struct Factors {
    V8 mean[2], a[2], dy_mean[2], k[2], relu_a[2], relu_b[2];
  };
  DISTCONV_INLINE Factors factors(Index j0) const {
    Factors f{{load8(mean + j0), load8(mean + j0 + 8)},
              {load8(a + j0), load8(a + j0 + 8)},
              {load8(dy_mean + j0), load8(dy_mean + j0 + 8)},
              {load8(k + j0), load8(k + j0 + 8)},
              {},
              {}};
    if constexpr (kAct == NormActivation::kRelu) {
      for (int h = 0; h < 2; ++h) {
        f.relu_a[h] = load8(relu_a + j0 + 8 * h);
        f.relu_b[h] = load8(relu_b + j0 + 8 * h);
      }
    }
    return f;
  }
  DISTCONV_INLINE void block(Index i, const Factors& f) const {
    V8 v[2];
    for (int h = 0; h < 2; ++h) {
      const Index at = i + 8 * h;
      const V8 d = load8(x + at) - f.mean[h];
      V8 g = load8(dy + at);
      if constexpr (kAct == NormActivation::kRelu) {
        g = gate(d * f.relu_a[h] + f.relu_b[h], g, above);
      }
      v[h] = f.a[h] * ((g - f.dy_mean[h]) - d * f.k[h]);
    }
    for (int h = 0; h < 2; ++h) store8<kStores>(dx + i + 8 * h, v[h]);
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    const double d = x[i] - mean[j];
    double g = dy[i];
    if constexpr (kAct == NormActivation::kRelu) {
      g = gate(d * relu_a[j] + relu_b[j], g, above);
    }
    dx[i] = a[j] * ((g - dy_mean[j]) - d * k[j]);
  }
};

// The same in float, both means split, on arrays stored as S (float or
// bf16).
template <typename S, Stores kStores, NormActivation kAct>
struct DiffSrcIn32 {
  const S *x, *dy;
  S* dx;
  const float *mean_hi, *mean_lo, *a, *dy_mean_hi, *dy_mean_lo, *k, *relu_a,
      *relu_b;
  float above;  // the gate's (kRelu)
  struct Factors {
    F16 mean_hi, mean_lo, a, dy_mean_hi, dy_mean_lo, k, relu_a, relu_b;
  };
  DISTCONV_INLINE Factors factors(Index j0) const {
    Factors f{load16(mean_hi + j0),
              load16(mean_lo + j0),
              load16(a + j0),
              load16(dy_mean_hi + j0),
              load16(dy_mean_lo + j0),
              load16(k + j0),
              F16{},
              F16{}};
    if constexpr (kAct == NormActivation::kRelu) {
      f.relu_a = load16(relu_a + j0);
      f.relu_b = load16(relu_b + j0);
    }
    return f;
  }
  DISTCONV_INLINE void block(Index i, const Factors& f) const {
    const F16 d = (load16(x + i) - f.mean_hi) - f.mean_lo;
    F16 g = load16(dy + i);
    if constexpr (kAct == NormActivation::kRelu) {
      g = gate(d * f.relu_a + f.relu_b, g, above);
    }
    const F16 e = (g - f.dy_mean_hi) - f.dy_mean_lo;
    store16<kStores>(dx + i, f.a * (e - d * f.k));
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    const float d = (float(x[i]) - mean_hi[j]) - mean_lo[j];
    float g = float(dy[i]);
    if constexpr (kAct == NormActivation::kRelu) {
      g = gate(d * relu_a[j] + relu_b[j], g, above);
    }
    const float e = (g - dy_mean_hi[j]) - dy_mean_lo[j];
    dx[i] = S(a[j] * (e - d * k[j]));
  }
};
template <Stores kStores, NormActivation kAct = NormActivation::kNone>
using DiffSrcFloat = DiffSrcIn32<float, kStores, kAct>;
template <Stores kStores, NormActivation kAct = NormActivation::kNone>
using DiffSrcBf16 = DiffSrcIn32<bf16, kStores, kAct>;

// The reductions' functors (for_each_strip in local_batch_norm.cc): f.add(acc,
// data offset, position) adds a chunk's 16 values at a position to acc,
// f.store(acc, position) adds acc to the totals, f.scalar(offset, position)
// adds one value of a partial chunk.

// Sums of deviations from a shift, and of their squares, accumulated in
// V (V8 or V4: batch_norm_blocks.h).
template <typename T, typename V>
struct ShiftedMoments {
  const T* x;
  const double* shift;
  double *sum_dev, *sum_sq;
  using Vec = V;
  struct Acc {
    V d[kParts<V>], q[kParts<V>];
  };
  DISTCONV_INLINE void add(Acc& a, Index i, Index j0) const {
#pragma GCC unroll 4
    for (int h = 0; h < kParts<V>; ++h) {
      const Index o = kLanes<V> * h;
      const V d = load_v<V>(x + i + o) - load_v<V>(shift + j0 + o);
      a.d[h] += d;
      a.q[h] += d * d;
    }
  }
  DISTCONV_INLINE void store(const Acc& a, Index j0) const {
#pragma GCC unroll 4
    for (int h = 0; h < kParts<V>; ++h) {
      add_v(sum_dev + j0 + kLanes<V> * h, a.d[h]);
      add_v(sum_sq + j0 + kLanes<V> * h, a.q[h]);
    }
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    const double d = double(x[i]) - shift[j];
    sum_dev[j] += d;
    sum_sq[j] += d * d;
  }
};

// Gate: Ungated<T> or a ReLU gate (kernels/internal/batch_norm_blocks.h),
// which says what dy the sums see.
template <typename T, typename Gate, typename V>
struct GradientSums {
  const T* x;
  Gate g;
  const double* mean;
  double *sum_dy, *sum_dy_dev;
  using Vec = V;
  struct Acc {
    V g[kParts<V>], gd[kParts<V>];
  };
  DISTCONV_INLINE void add(Acc& a, Index i, Index j0) const {
    V dy[kParts<V>];
    g.dy16(x, i, j0, dy);
#pragma GCC unroll 4
    for (int h = 0; h < kParts<V>; ++h) {
      const Index o = kLanes<V> * h;
      a.g[h] += dy[h];
      a.gd[h] += dy[h] * (load_v<V>(x + i + o) - load_v<V>(mean + j0 + o));
    }
  }
  DISTCONV_INLINE void store(const Acc& a, Index j0) const {
#pragma GCC unroll 4
    for (int h = 0; h < kParts<V>; ++h) {
      add_v(sum_dy + j0 + kLanes<V> * h, a.g[h]);
      add_v(sum_dy_dev + j0 + kLanes<V> * h, a.gd[h]);
    }
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    const double gv = g.dy1(x, i, j);
    sum_dy[j] += gv;
    sum_dy_dev[j] += gv * (double(x[i]) - mean[j]);
  }
};

}  // namespace distconv::internal::batch_norm_blocks

#endif  // DISTCONV_KERNELS_INTERNAL_BATCH_NORM_BLOCKS_H_
