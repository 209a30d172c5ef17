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
  // Round to nearest, ties to even.
  DISTCONV_FP16_HD static std::uint16_t round(float f) {
    const std::uint32_t u = internal::bits_of(f);
    const std::uint32_t sign = (u >> 16) & 0x8000u;
    const std::uint32_t a = u & 0x7fffffffu;
    std::uint32_t h;
    if (a < 0x38800000u) {
      // |f| < 2^-14: a subnormal or zero. The significand with its leading
      // one, in units of 2^-24, rounded to nearest even; from 25 places
      // down everything rounds to zero (float subnormals included).
      const std::uint32_t e = a >> 23;
      const std::uint32_t shift = e < 101u ? 25u : 126u - e;  // 14 to 25
      const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
      const std::uint32_t q = m >> shift;
      const std::uint32_t rest = m & ((1u << shift) - 1u);
      const std::uint32_t half = 1u << (shift - 1u);
      h = q + ((rest > half || (rest == half && (q & 1u))) ? 1u : 0u);
    } else if (a < 0x47800000u) {
      // A normal fp32 in fp16's exponent range: the exponent rebiased
      // (127 to 15), 13 bits rounded off; a carry runs into the exponent,
      // up to infinity (from 65520).
      h = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    } else if (a <= 0x7f800000u) {
      h = 0x7c00u;  // overflow or infinity
    } else {
      h = 0x7e00u | ((a >> 13) & 0x3ffu);  // NaN, made quiet
    }
    return static_cast<std::uint16_t>(sign | h);
  }

  DISTCONV_FP16_HD static float widen(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
    const std::uint32_t e = (h >> 10) & 0x1fu;
    const std::uint32_t m = h & 0x3ffu;
    if (e == 0) {  // zero or subnormal: m * 2^-24, exact in fp32
      const float magnitude = static_cast<float>(m) * 0x1p-24f;
      return sign ? -magnitude : magnitude;
    }
    const std::uint32_t exponent = e == 0x1fu ? 0xffu : e + 112u;
    return internal::float_of(sign | (exponent << 23) | (m << 13));
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
