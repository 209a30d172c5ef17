// The launch shape and loop of the CUDA kernels that take one element per
// thread (pooling, activations): blocks of kThreadsPerBlock threads, at
// most 2^20 blocks, each thread then striding over the rest. Included by
// .cu files only.
//
//   kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(n, ...);
//   __global__ void kernel(std::int64_t n, ...) {
//     for_each_element(n, [&](std::int64_t e) { ... });
//   }
#ifndef DISTCONV_KERNELS_CUDA_GRID_STRIDE_H_
#define DISTCONV_KERNELS_CUDA_GRID_STRIDE_H_

#include <algorithm>
#include <cstdint>

namespace distconv::internal {

inline constexpr int kThreadsPerBlock = 256;

inline unsigned grid_stride_blocks(std::int64_t n) {
  constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;
  return static_cast<unsigned>(
      std::min(kMaxBlocks, (n + kThreadsPerBlock - 1) / kThreadsPerBlock));
}

// fn(e) for every e in [0, n) this thread takes.
template <typename Fn>
__device__ void for_each_element(std::int64_t n, Fn fn) {
  const std::int64_t step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
       e < n; e += step) {
    fn(e);
  }
}

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_CUDA_GRID_STRIDE_H_
