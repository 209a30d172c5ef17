// The CUDA pooling kernels CudaPool (pool.h) launches: pool_window.h's
// per-cell functions over every output cell (forward) or input-gradient
// cell (backward), on `stream`, asynchronously. Pointers are the views'
// first cells; the window holds their strides. Defined for float, double,
// bf16 and fp16 (averages summed in fp32, rounded once, as on the host). Built
// only with --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_POOL_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_POOL_KERNELS_H_

#include "distconv/bf16.h"
#include "kernels/cuda/pool_window.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// Throws Error(kDevice) if the launch fails.
template <typename T>
void launch_pool_forward(const PoolWindow& w, const T* src, T* dst,
                         CUstream_st* stream);
template <typename T>
void launch_pool_backward(const PoolWindow& w, const T* src,
                          const T* diff_dst, T* diff_src, CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_POOL_KERNELS_H_
