#include "distconv/fp16.h"

#include <cstdint>
#include <cstring>

#include "distconv/internal/target_clones.h"

namespace distconv {

// Built with -fopenmp-simd (//distconv:core) and per instruction set.
DISTCONV_CLONES void convert(const fp16* from, std::size_t n, float* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
}

// Stored as bits: a copy of the fp16 itself keeps GCC from vectorising.
DISTCONV_CLONES void convert(const float* from, std::size_t n, fp16* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t bits = fp16(from[i]).bits();
    std::memcpy(to + i, &bits, sizeof bits);
  }
}

}  // namespace distconv
