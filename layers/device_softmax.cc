// The softmax layer in GPU memory (Softmax<T, DeviceSpace>): CUDA kernels
// over the interiors, on SoftmaxOptions::stream. The layer itself is
// layers/internal/softmax_impl.h. Built only with --config=cuda.
#include <string>

#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/channel_cells.h"
#include "kernels/cuda/softmax_kernels.h"
#include "layers/internal/softmax_impl.h"
#include "layers/softmax.h"

namespace distconv {
namespace internal {

template <typename T>
class SoftmaxBackend<T, DeviceSpace> {
 public:
  using View = StridedView<T, DeviceSpace>;
  using ConstView = StridedView<const T, DeviceSpace>;

  SoftmaxBackend(const SoftmaxOptions& o, const Box&)
      : kind_(o.kind), stream_(o.stream) {}

  void forward(const ConstView& x, const View& y) {
    launch_softmax_forward<T>(
        kind_, cell_walk<2>(x.extent(), {y.strides(), x.strides()}), y.data(),
        x.data(), stream_);
  }

  void backward(const ConstView& y, const ConstView& dy, const View& dx) {
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

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Softmax<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
