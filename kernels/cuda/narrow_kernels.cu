#include <cuda_bf16.h>
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

__global__ void __launch_bounds__(kThreadsPerBlock)
    narrow_kernel(const float* from, __nv_bfloat16* to, std::int64_t n) {
  for_each_element(
      n, [&](std::int64_t i) { to[i] = __float2bfloat16_rn(from[i]); });
}

__global__ void __launch_bounds__(kThreadsPerBlock)
    add_widened_kernel(const __nv_bfloat16* from, float* to, std::int64_t n) {
  for_each_element(n,
                   [&](std::int64_t i) { to[i] += __bfloat162float(from[i]); });
}

}  // namespace

void launch_narrow(const float* from, bf16* to, Index n, CUstream_st* stream) {
  if (n == 0) return;
  narrow_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      from, reinterpret_cast<__nv_bfloat16*>(to), n);
  internal::check_cuda(cudaGetLastError(), "the GPU fp32 -> bf16 launch");
}

void launch_add_widened(const bf16* from, float* to, Index n,
                        CUstream_st* stream) {
  if (n == 0) return;
  add_widened_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(from), to, n);
  internal::check_cuda(cudaGetLastError(), "the GPU bf16 -> fp32 launch");
}

}  // namespace distconv
