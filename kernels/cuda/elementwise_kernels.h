// The CUDA kernels of the GPU's primitives (kernels/cuda/space_ops.h: sum,
// copy and zero of strided views of GPU memory, which the layers written
// for every space call): one thread per element of a PointwiseDims walk,
// queued on `stream`. The pointers are the views' first elements; dst may
// be a source (the same elements: in place), not a partial overlap.
// Defined for float, double, bf16 and fp16 (added in fp32, rounded once).
// Throw Error(kDevice) if a launch fails. Built only with --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_ELEMENTWISE_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_ELEMENTWISE_KERNELS_H_

#include "distconv/bf16.h"
#include "distconv/internal/pointwise_dims.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// dst = a + b; views in that order in `dims`.
template <typename T>
void launch_add(const internal::PointwiseDims<3>& dims, T* dst, const T* a,
                const T* b, CUstream_st* stream);

// dst = src; views in that order.
template <typename T>
void launch_copy(const internal::PointwiseDims<2>& dims, T* dst, const T* src,
                 CUstream_st* stream);

// dst = 0.
template <typename T>
void launch_zero(const internal::PointwiseDims<1>& dims, T* dst,
                 CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_ELEMENTWISE_KERNELS_H_
