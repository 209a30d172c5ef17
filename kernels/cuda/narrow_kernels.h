// The conversions between bf16 or fp16 arrays in GPU memory and the fp32
// values a layer on such tensors keeps its weights, biases and their
// gradients in (Compute<T>, distconv/bf16.h): one thread per element,
// queued on
// `stream`. Throw Error(kDevice) if a launch fails. Built only with
// --config=cuda.
//
//   launch_narrow(weights, weights_bf16, n, stream);   // for cuDNN
//   launch_add_widened(grad_bf16, diff_weights, n, stream);
#ifndef DISTCONV_KERNELS_CUDA_NARROW_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_NARROW_KERNELS_H_

#include "distconv/bf16.h"
#include "distconv/shape.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// to[i] = from[i] rounded to bf16 or fp16 (to nearest, ties to even),
// i < n.
void launch_narrow(const float* from, bf16* to, Index n, CUstream_st* stream);
void launch_narrow(const float* from, fp16* to, Index n, CUstream_st* stream);

// to[i] += from[i] (in fp32), i < n.
void launch_add_widened(const bf16* from, float* to, Index n,
                        CUstream_st* stream);
void launch_add_widened(const fp16* from, float* to, Index n,
                        CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_NARROW_KERNELS_H_
