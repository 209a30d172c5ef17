// A float's bits and back, on the host and (under nvcc) on the GPU: the
// conversions of distconv's 16-bit types (bf16.h, fp16.h) are built on
// them.
#ifndef DISTCONV_FLOAT_BITS_H_
#define DISTCONV_FLOAT_BITS_H_

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define DISTCONV_FLOAT_BITS_HD __host__ __device__
#else
#define DISTCONV_FLOAT_BITS_HD
#endif

namespace distconv::internal {

DISTCONV_FLOAT_BITS_HD inline std::uint32_t bits_of(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

DISTCONV_FLOAT_BITS_HD inline float float_of(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

}  // namespace distconv::internal

#undef DISTCONV_FLOAT_BITS_HD

#endif  // DISTCONV_FLOAT_BITS_H_
