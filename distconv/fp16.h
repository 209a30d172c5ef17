// fp16: the IEEE binary16 storage type (1 sign, 5 exponent and 10 mantissa
// bits: 11 bits of precision, largest finite value 65504), as a plain
// 16-bit value that needs no compiler extension. Like bf16 it converts to
// and from float implicitly, so arithmetic written for float runs on it in
// fp32, rounded once when stored:
//
//   fp16 x = 1.1f;            // rounded to nearest, ties to even: 1.099609375
//   float y = x * 2.0f;       // computed in fp32
//   x = y;                    // rounded again
//
// NaN stays NaN (quiet, sign and top payload bits kept), infinities and
// signed zeros are kept, values from 65520 up round to infinity (IEEE
// overflow under round-to-nearest), subnormals are produced and read.
// Compute<fp16> is float (distconv/bf16.h, which includes this header).
#ifndef DISTCONV_FP16_H_
#define DISTCONV_FP16_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "distconv/float_bits.h"

// Compiled for the GPU too under nvcc (the CUDA kernels of the layers run
// on fp16 elements with the host's arithmetic); plain C++ elsewhere.
#if defined(__CUDACC__)
#define DISTCONV_FP16_HD __host__ __device__
#else
#define DISTCONV_FP16_HD
#endif

namespace distconv {

class fp16 {
 public:
  fp16() = default;               // value-initialised (fp16{}, std::vector): +0
  DISTCONV_FP16_HD fp16(float f)  // NOLINT: implicit, as float's are
      : bits_(round(f)) {}
  DISTCONV_FP16_HD operator float() const {  // NOLINT: exact
    return widen(bits_);
  }

  DISTCONV_FP16_HD static fp16 from_bits(std::uint16_t bits) {
    fp16 h;
    h.bits_ = bits;
    return h;
  }
  DISTCONV_FP16_HD std::uint16_t bits() const { return bits_; }

 private:
  // All ones where `c`, else zero: the cases below are chosen with masks
  // rather than branches or selects (which GCC keeps as branches), so that
  // loops of conversions vectorise (convert(), the kernels' channel loops).
  DISTCONV_FP16_HD static std::uint32_t mask(bool c) {
    return 0u - static_cast<std::uint32_t>(c);
  }

  // Round to nearest, ties to even. Every case is computed, one kept.
  DISTCONV_FP16_HD static std::uint16_t round(float f) {
    const std::uint32_t u = internal::bits_of(f);
    const std::uint32_t sign = (u >> 16) & 0x8000u;
    const std::uint32_t a = u & 0x7fffffffu;
    // |f| < 2^-14: a subnormal or zero. The significand with its leading
    // one, in units of 2^-24, rounded to nearest even; from 25 places down
    // everything rounds to zero (float subnormals included). The shift is
    // 14 to 25 here, and kept in range (25) in the other cases.
    const std::uint32_t e = a >> 23;
    const std::uint32_t in_range = mask(e >= 101u && e <= 112u);
    const std::uint32_t shift = ((126u - e) & in_range) | (25u & ~in_range);
    const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const std::uint32_t q = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    // Up past the half (both below 2^25, so the difference's sign bit
    // says rest > half), or on it to an even q.
    const std::uint32_t up = (half - rest) >> 31;
    const std::uint32_t tie = mask(rest == half) & q & 1u;
    const std::uint32_t subnormal = q + (up | tie);
    // A normal fp32 in fp16's exponent range: the exponent rebiased (127
    // to 15), 13 bits rounded off; a carry runs into the exponent, up to
    // infinity (from 65520).
    const std::uint32_t normal =
        (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    // Overflow or infinity; NaN, made quiet.
    const std::uint32_t is_nan = mask(a > 0x7f800000u);
    const std::uint32_t special =
        (0x7c00u & ~is_nan) | ((0x7e00u | ((a >> 13) & 0x3ffu)) & is_nan);
    const std::uint32_t is_subnormal = mask(a < 0x38800000u);
    const std::uint32_t is_normal = mask(a < 0x47800000u) & ~is_subnormal;
    const std::uint32_t is_special = ~(is_subnormal | is_normal);
    const std::uint32_t h = (subnormal & is_subnormal) | (normal & is_normal) |
                            (special & is_special);
    return static_cast<std::uint16_t>(sign | h);
  }

  DISTCONV_FP16_HD static float widen(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
    const std::uint32_t e = (h >> 10) & 0x1fu;
    const std::uint32_t m = h & 0x3ffu;
    // Zero or subnormal: m * 2^-24, exact in fp32.
    const std::uint32_t subnormal =
        sign | internal::bits_of(static_cast<float>(m) * 0x1p-24f);
    // Normal, infinity or NaN: the exponent rebiased (15 to 127; 31 to
    // 255), the significand's bits kept.
    const std::uint32_t exponent = e + 112u + (112u & mask(e == 0x1fu));
    const std::uint32_t normal = sign | (exponent << 23) | (m << 13);
    const std::uint32_t is_subnormal = mask(e == 0);
    return internal::float_of((subnormal & is_subnormal) |
                              (normal & ~is_subnormal));
  }

  std::uint16_t bits_;
};

static_assert(sizeof(fp16) == 2 && std::is_trivially_copyable_v<fp16>);

// to[i] = from[i] for i < n (fp16.cc).
void convert(const fp16* from, std::size_t n, float* to);
void convert(const float* from, std::size_t n, fp16* to);

}  // namespace distconv

#undef DISTCONV_FP16_HD

#endif  // DISTCONV_FP16_H_
