// The CUDA kernels of softmax and log-softmax over channels on GPU memory
// (Softmax<T, DeviceSpace>): one thread per (n, spatial) cell, running
// kernels/channel_cells.h's cell functions (the host loops' own code, in
// double), queued on `stream`. Views dst, src... in that order in the
// CellWalk; outputs may be their inputs. Defined for float, double,
// bf16 and fp16. Throw Error(kDevice) if a launch fails. Built only with
// --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_SOFTMAX_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_SOFTMAX_KERNELS_H_

#include "distconv/bf16.h"
#include "distconv/loss_desc.h"
#include "kernels/channel_cells.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// y = softmax(x) (or log-softmax); walk views: y, x.
template <typename T>
void launch_softmax_forward(SoftmaxKind kind, const CellWalk<2>& walk, T* y,
                            const T* x, CUstream_st* stream);

// dx from the forward's output y and dy; walk views: dx, y, dy.
template <typename T>
void launch_softmax_backward(SoftmaxKind kind, const CellWalk<3>& walk, T* dx,
                             const T* y, const T* dy, CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_SOFTMAX_KERNELS_H_
