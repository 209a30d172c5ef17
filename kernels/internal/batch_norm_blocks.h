// Internal: the batch-norm loops' blocks (kernels/local_batch_norm.cc):
// eight doubles or sixteen floats as GCC / Clang vector extensions that
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

// The elementwise passes compute in T's precision, with the mean split in
// two: for float, mean = hi + lo exactly enough (hi = float(mean), lo =
// float(mean - hi)), and x - mean = (x - hi) - lo, whose first difference
// is exact when x is near the mean (Sterbenz) and otherwise much larger
// than lo, so the deviation keeps float precision even where the mean
// dwarfs it (1e4 + noise): no cancellation, at float's vector width.
// Double needs no split.

// y = (x - mean) * a + b, double.
template <Stores kStores>
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
    }
    for (int h = 0; h < 2; ++h) store8<kStores>(y + i + 8 * h, v[h]);
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    y[i] = (x[i] - mean[j]) * a[j] + b[j];
  }
};

// y = ((x - mean_hi) - mean_lo) * a + b, float.
template <Stores kStores>
struct AffineFloat {
  const float* x;
  float* y;
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
    store16<kStores>(y + i, d * f.a + f.b);
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    y[i] = ((x[i] - mean_hi[j]) - mean_lo[j]) * a[j] + b[j];
  }
};

// dx = a * ((dy - dy_mean) - (x - mean) * k), double.
template <Stores kStores>
struct DiffSrcDouble {
  const double *x, *dy;
  double* dx;
  const double *mean, *a, *dy_mean, *k;
  struct Factors {
    V8 mean[2], a[2], dy_mean[2], k[2];
  };
  DISTCONV_INLINE Factors factors(Index j0) const {
    return {{load8(mean + j0), load8(mean + j0 + 8)},
            {load8(a + j0), load8(a + j0 + 8)},
            {load8(dy_mean + j0), load8(dy_mean + j0 + 8)},
            {load8(k + j0), load8(k + j0 + 8)}};
  }
  DISTCONV_INLINE void block(Index i, const Factors& f) const {
    V8 v[2];
    for (int h = 0; h < 2; ++h) {
      const Index at = i + 8 * h;
      v[h] = f.a[h] * ((load8(dy + at) - f.dy_mean[h]) -
                       (load8(x + at) - f.mean[h]) * f.k[h]);
    }
    for (int h = 0; h < 2; ++h) store8<kStores>(dx + i + 8 * h, v[h]);
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    dx[i] = a[j] * ((dy[i] - dy_mean[j]) - (x[i] - mean[j]) * k[j]);
  }
};

// The same in float, both means split.
template <Stores kStores>
struct DiffSrcFloat {
  const float *x, *dy;
  float* dx;
  const float *mean_hi, *mean_lo, *a, *dy_mean_hi, *dy_mean_lo, *k;
  struct Factors {
    F16 mean_hi, mean_lo, a, dy_mean_hi, dy_mean_lo, k;
  };
  DISTCONV_INLINE Factors factors(Index j0) const {
    return {load16(mean_hi + j0),    load16(mean_lo + j0),
            load16(a + j0),          load16(dy_mean_hi + j0),
            load16(dy_mean_lo + j0), load16(k + j0)};
  }
  DISTCONV_INLINE void block(Index i, const Factors& f) const {
    const F16 d = (load16(x + i) - f.mean_hi) - f.mean_lo;
    const F16 e = (load16(dy + i) - f.dy_mean_hi) - f.dy_mean_lo;
    store16<kStores>(dx + i, f.a * (e - d * f.k));
  }
  DISTCONV_INLINE void scalar(Index i, Index j) const {
    const float d = (x[i] - mean_hi[j]) - mean_lo[j];
    const float e = (dy[i] - dy_mean_hi[j]) - dy_mean_lo[j];
    dx[i] = a[j] * (e - d * k[j]);
  }
};

}  // namespace distconv::internal::batch_norm_blocks

#endif  // DISTCONV_KERNELS_INTERNAL_BATCH_NORM_BLOCKS_H_
