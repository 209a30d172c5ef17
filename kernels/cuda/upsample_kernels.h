// The CUDA kernels of nearest upsampling on GPU memory (Upsample<T,
// DeviceSpace>), queued on `stream`. The pointers are the views' first
// elements, their shapes UpsampleGeometry (kernels/upsample_geometry.h).
// Defined for every element type of distconv/element_types.h (gradients summed
// in fp32, rounded once, as on the host). Throw Error(kDevice) if a launch
// fails. Built only with --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_UPSAMPLE_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_UPSAMPLE_KERNELS_H_

#include "distconv/bf16.h"
#include "kernels/upsample_geometry.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// One thread per output cell: dst(n, c, o) = src(n, c, o / f).
template <typename T>
void launch_upsample_forward(const UpsampleFactors& f,
                             const UpsampleGeometry& src_shape, const T* src,
                             const UpsampleGeometry& dst_shape, T* dst,
                             CUstream_st* stream);

// One thread per input cell: diff_src(n, c, i) = the sum of diff_dst over
// the block i * f + k, k in row-major order from the block's first cell
// (the host loops' order: the same sums bit for bit).
template <typename T>
void launch_upsample_backward(const UpsampleFactors& f,
                              const UpsampleGeometry& diff_dst_shape,
                              const T* diff_dst,
                              const UpsampleGeometry& diff_src_shape,
                              T* diff_src, CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_UPSAMPLE_KERNELS_H_
