#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/cuda/narrow_kernels.h"

namespace distconv {
namespace {

using internal::for_each_element;
using internal::grid_stride_blocks;
using internal::kThreadsPerBlock;

static_assert(sizeof(bf16) == sizeof(__nv_bfloat16));
static_assert(sizeof(fp16) == sizeof(__half));

// CUDA's rounding and widening of its own 16-bit types (round to nearest,
// ties to even, as distconv's).
__device__ __nv_bfloat16 narrowed(float f, const __nv_bfloat16*) {
  return __float2bfloat16_rn(f);
}
__device__ __half narrowed(float f, const __half*) {
  return __float2half_rn(f);
}
__device__ float widened(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ float widened(__half v) { return __half2float(v); }

template <typename C>
__global__ void __launch_bounds__(kThreadsPerBlock)
    narrow_kernel(const float* from, C* to, std::int64_t n) {
  for_each_element(n,
                   [&](std::int64_t i) { to[i] = narrowed(from[i], to); });
}

template <typename C>
__global__ void __launch_bounds__(kThreadsPerBlock)
    add_widened_kernel(const C* from, float* to, std::int64_t n) {
  for_each_element(n, [&](std::int64_t i) { to[i] += widened(from[i]); });
}

template <typename C, typename T>
void narrow_on(const float* from, T* to, Index n, CUstream_st* stream,
               const char* what) {
  if (n == 0) return;
  narrow_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      from, reinterpret_cast<C*>(to), n);
  internal::check_cuda(cudaGetLastError(), what);
}

template <typename C, typename T>
void add_widened_on(const T* from, float* to, Index n, CUstream_st* stream,
                    const char* what) {
  if (n == 0) return;
  add_widened_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      reinterpret_cast<const C*>(from), to, n);
  internal::check_cuda(cudaGetLastError(), what);
}

}  // namespace

void launch_narrow(const float* from, bf16* to, Index n, CUstream_st* stream) {
  narrow_on<__nv_bfloat16>(from, to, n, stream, "the GPU fp32 -> bf16 launch");
}
void launch_narrow(const float* from, fp16* to, Index n, CUstream_st* stream) {
  narrow_on<__half>(from, to, n, stream, "the GPU fp32 -> fp16 launch");
}

void launch_add_widened(const bf16* from, float* to, Index n,
                        CUstream_st* stream) {
  add_widened_on<__nv_bfloat16>(from, to, n, stream,
                                "the GPU bf16 -> fp32 launch");
}
void launch_add_widened(const fp16* from, float* to, Index n,
                        CUstream_st* stream) {
  add_widened_on<__half>(from, to, n, stream, "the GPU fp16 -> fp32 launch");
}

}  // namespace distconv
