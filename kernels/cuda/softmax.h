// CudaSoftmax<T>: softmax and log-softmax over channels on strided
// (N, C, spatial...) views of GPU memory, the GPU's counterpart of
// kernels/local_softmax.h: one CUDA thread per (n, spatial) cell running
// kernels/channel_cells.h's cell functions in double
// (kernels/cuda/softmax_kernels.h), queued on the stream it was made
// with. Defined for every element type of distconv/element_types.h. Built
// only with --config=cuda.
//
//   CudaSoftmax<float> s(SoftmaxKind::kSoftmax, stream);
//   s.forward(x, y);
//   s.backward(y, dy, dx);
#ifndef DISTCONV_KERNELS_CUDA_SOFTMAX_H_
#define DISTCONV_KERNELS_CUDA_SOFTMAX_H_

#include <string>

#include "distconv/device_space.h"
#include "distconv/loss_desc.h"
#include "distconv/strided_view.h"
#include "kernels/channel_cells.h"
#include "kernels/cuda/softmax_kernels.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

template <typename T>
class CudaSoftmax {
 public:
  using View = StridedView<T, DeviceSpace>;
  using ConstView = StridedView<const T, DeviceSpace>;

  CudaSoftmax(SoftmaxKind kind, CUstream_st* stream)
      : kind_(kind), stream_(stream) {}

  // y = softmax(x) (or log-softmax); y may be x.
  void forward(const ConstView& x, const View& y) const {
    launch_softmax_forward<T>(
        kind_, cell_walk<2>(x.extent(), {y.strides(), x.strides()}), y.data(),
        x.data(), stream_);
  }
  // dx from the forward's output y and dy; overwrites dx.
  void backward(const ConstView& y, const ConstView& dy, const View& dx) const {
    launch_softmax_backward<T>(
        kind_,
        cell_walk<3>(y.extent(), {dx.strides(), y.strides(), dy.strides()}),
        dx.data(), y.data(), dy.data(), stream_);
  }
  std::string describe() const {
    return "CUDA kernel, one thread per cell, in double";
  }

 private:
  SoftmaxKind kind_;
  CUstream_st* stream_;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_SOFTMAX_H_
