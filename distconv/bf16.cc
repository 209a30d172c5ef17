#include "distconv/bf16.h"

namespace distconv {

// Built with -fopenmp-simd (//distconv:core); each loop compiled once per
// instruction set and picked at load time (narrowing 32 to 16 bits needs
// more than SSE2 to vectorise). -DDISTCONV_NO_TARGET_CLONES keeps the
// baseline only.
#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(DISTCONV_NO_TARGET_CLONES)
#define DISTCONV_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DISTCONV_CLONES
#endif

DISTCONV_CLONES void convert(const bf16* from, std::size_t n, float* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
}

// bf16's rounding with masks instead of a select, which GCC keeps as a
// branch.
DISTCONV_CLONES void convert(const float* from, std::size_t n, bf16* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, from + i, sizeof u);
    const std::uint32_t nearest = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const std::uint32_t nan = 0u - std::uint32_t((u & 0x7fffffffu) > 0x7f800000u);
    const auto bits = static_cast<std::uint16_t>(
        (nearest & ~nan) | (((u >> 16) | 0x40u) & nan));
    std::memcpy(to + i, &bits, sizeof bits);
  }
}

}  // namespace distconv
