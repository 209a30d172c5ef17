#include "distconv/fp16.h"

#include "distconv/internal/target_clones.h"

namespace distconv {

// Built with -fopenmp-simd (//distconv:core) and per instruction set.
DISTCONV_CLONES void convert(const fp16* from, std::size_t n, float* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
}

DISTCONV_CLONES void convert(const float* from, std::size_t n, fp16* to) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
}

}  // namespace distconv
