// Internal: bf16 values in the batch-norm blocks' float vectors
// (kernels/internal/batch_norm_blocks.h, GCC / Clang vector extensions):
// sixteen, eight or four bf16 widened to floats as they load (their bits
// moved up: exact), and sixteen floats rounded to bf16 as distconv::bf16
// rounds one (to nearest, ties to even; NaN stays NaN, quiet), on vectors,
// so that the passes read and write bf16 arrays with no fp32 copies.
//
//   F16 v = widen_bf16<F16>(p);     // p: sixteen bf16
//   U16x16 bits = round_bf16(v);    // sixteen bf16's bits
#ifndef DISTCONV_KERNELS_INTERNAL_BF16_VECTORS_H_
#define DISTCONV_KERNELS_INTERNAL_BF16_VECTORS_H_

#include <cstdint>
#include <cstring>

#include "distconv/bf16.h"

#define DISTCONV_INLINE inline __attribute__((always_inline))

namespace distconv::internal::batch_norm_blocks {

#pragma GCC diagnostic ignored "-Wpsabi"
typedef std::uint16_t U16x16 __attribute__((vector_size(32)));
typedef std::uint32_t U32x16 __attribute__((vector_size(64)));
typedef std::uint16_t U16x8 __attribute__((vector_size(16)));
typedef std::uint32_t U32x8 __attribute__((vector_size(32)));
typedef std::uint16_t U16x4 __attribute__((vector_size(8)));
typedef std::uint32_t U32x4 __attribute__((vector_size(16)));

// The float vector F (of 16, 8 or 4 floats) of the bf16 at p.
template <typename F, typename Narrow, typename Wide>
DISTCONV_INLINE F widen_bf16_as(const bf16* p) {
  static_assert(sizeof(Narrow) * 2 == sizeof(F) && sizeof(Wide) == sizeof(F));
  Narrow h;
  std::memcpy(&h, p, sizeof h);
  const Wide w = __builtin_convertvector(h, Wide) << 16;
  F f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}
template <typename F>
DISTCONV_INLINE F widen_bf16(const bf16* p) {
  if constexpr (sizeof(F) == 64) {
    return widen_bf16_as<F, U16x16, U32x16>(p);
  } else if constexpr (sizeof(F) == 32) {
    return widen_bf16_as<F, U16x8, U32x8>(p);
  } else {
    return widen_bf16_as<F, U16x4, U32x4>(p);
  }
}

// Sixteen floats (a 64-byte vector F) rounded to bf16: their bits, as
// bf16::round computes them one at a time.
template <typename F>
DISTCONV_INLINE U16x16 round_bf16(const F& v) {
  static_assert(sizeof(F) == sizeof(U32x16));
  U32x16 u;
  std::memcpy(&u, &v, sizeof u);
  const U32x16 nearest = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const U32x16 quiet = (u >> 16) | 0x40u;
  const U32x16 nan = (U32x16)((u & 0x7fffffffu) > 0x7f800000u);
  return __builtin_convertvector((nearest & ~nan) | (quiet & nan), U16x16);
}

}  // namespace distconv::internal::batch_norm_blocks

#endif  // DISTCONV_KERNELS_INTERNAL_BF16_VECTORS_H_
