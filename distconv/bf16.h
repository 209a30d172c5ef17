// bf16: the bfloat16 storage type (1 sign, 8 exponent and 7 mantissa bits:
// fp32's range at 8 bits of precision), as a plain 16-bit value that needs
// no compiler extension. It converts to and from float implicitly, so
// arithmetic written for float runs on it in fp32, rounded once when stored:
//
//   bf16 x = 1.1f;            // rounded to nearest, ties to even: 1.1015625
//   float y = x * 2.0f;       // computed in fp32
//   x = y;                    // rounded again
//
// NaN stays NaN (quiet), infinities and signed zeros are kept, values past
// bf16's largest finite value round to infinity, subnormals are kept.
//
// Compute<T> is the type a layer on elements of T computes in and keeps
// its parameters, statistics and gradients in: float for bf16 and fp16
// (distconv/fp16.h, included here), T itself for float and double. A
// layer on bf16 or fp16 tensors thus takes fp32 weights (the optimizer's
// master copy) and gives fp32 weight gradients.
#ifndef DISTCONV_BF16_H_
#define DISTCONV_BF16_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "distconv/float_bits.h"
#include "distconv/fp16.h"

// Compiled for the GPU too under nvcc (the CUDA kernels of the layers run
// on bf16 elements with the host's arithmetic); plain C++ elsewhere.
#if defined(__CUDACC__)
#define DISTCONV_BF16_HD __host__ __device__
#else
#define DISTCONV_BF16_HD
#endif

namespace distconv {

class bf16 {
 public:
  bf16() = default;  // value-initialised (bf16{}, std::vector): +0
  DISTCONV_BF16_HD bf16(float f)  // NOLINT: implicit, as float's are
      : bits_(round(f)) {}
  DISTCONV_BF16_HD operator float() const {  // NOLINT: exact
    return internal::float_of(std::uint32_t{bits_} << 16);
  }

  DISTCONV_BF16_HD static bf16 from_bits(std::uint16_t bits) {
    bf16 b;
    b.bits_ = bits;
    return b;
  }
  DISTCONV_BF16_HD std::uint16_t bits() const { return bits_; }

 private:
  // Round to nearest, ties to even; NaN made quiet (its sign and top
  // payload bits kept). Branch-free, the NaN case chosen with masks
  // rather than a select (which GCC keeps as a branch), so that loops of
  // it vectorise (convert()).
  DISTCONV_BF16_HD static std::uint16_t round(float f) {
    const std::uint32_t u = internal::bits_of(f);
    const std::uint32_t nearest = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const std::uint32_t quiet = (u >> 16) | 0x40u;
    const bool is_nan = (u & 0x7fffffffu) > 0x7f800000u;
    const std::uint32_t nan = 0u - static_cast<std::uint32_t>(is_nan);
    return static_cast<std::uint16_t>((nearest & ~nan) | (quiet & nan));
  }

  std::uint16_t bits_;
};

static_assert(sizeof(bf16) == 2 && std::is_trivially_copyable_v<bf16>);

// to[i] = from[i] for i < n, vectorised (bf16.cc).
void convert(const bf16* from, std::size_t n, float* to);
void convert(const float* from, std::size_t n, bf16* to);

template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<bf16> {
  using type = float;
};
template <>
struct ComputeTypeOf<fp16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeTypeOf<T>::type;

// Whether elements of T are stored narrower than they are computed in
// (bf16, fp16): such layers stage their kernels in Compute<T>.
template <typename T>
inline constexpr bool kNarrow = !std::is_same_v<T, Compute<T>>;

}  // namespace distconv

#undef DISTCONV_BF16_HD

#endif  // DISTCONV_BF16_H_
