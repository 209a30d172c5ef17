// The CUDA kernels of the activations on GPU memory (Activation<T,
// DeviceSpace>): one thread per element of a PointwiseDims walk, running
// kernels/activation_ops.h's math, queued on `stream`. The pointers are the
// views' first elements; dst may be one of the inputs (the same elements:
// in place), not a partial overlap. Defined for float, double, bf16
// and fp16 (the slope in fp32, as on the host). Built only with --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_ACTIVATION_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_ACTIVATION_KERNELS_H_

#include "distconv/activation_desc.h"
#include "distconv/bf16.h"
#include "distconv/internal/pointwise_dims.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// dst = activation(src); views in that order in `dims`. Throws
// Error(kDevice) if the launch fails.
template <typename T>
void launch_activation_forward(const ActivationDesc& desc,
                               const internal::PointwiseDims<2>& dims, T* dst,
                               const T* src, CUstream_st* stream);

// diff_src = activation'(sign_of) * diff_dst; views in that order.
template <typename T>
void launch_activation_backward(const ActivationDesc& desc,
                                const internal::PointwiseDims<3>& dims,
                                T* diff_src, const T* sign_of,
                                const T* diff_dst, CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_ACTIVATION_KERNELS_H_
