#include "distconv/bf16.h"

#include "distconv/internal/target_clones.h"

namespace distconv {

// Built with -fopenmp-simd (//distconv:core) and per instruction set
// (narrowing 32 to 16 bits needs more than SSE2 to vectorise).
DISTCONV_CLONES void convert(const bf16* from, std::size_t n, float* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
}

// Stored as bits: a copy of the bf16 itself keeps GCC from vectorising.
DISTCONV_CLONES void convert(const float* from, std::size_t n, bf16* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t bits = bf16(from[i]).bits();
    std::memcpy(to + i, &bits, sizeof bits);
  }
}

}  // namespace distconv
