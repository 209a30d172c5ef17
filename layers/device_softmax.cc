// The softmax layer in GPU memory (Softmax<T, DeviceSpace>):
// kernels/cuda/softmax.h over the interiors, on the stream of the layer's
// Exec<DeviceSpace>.
// The layer itself is layers/internal/softmax_impl.h. Built only with
// --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/softmax.h"
#include "layers/internal/softmax_impl.h"
#include "layers/softmax.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<SoftmaxKernelCall, T, DeviceSpace> {
  using type = CudaSoftmax<T>;
  static type make(const Exec<DeviceSpace>& exec, const SoftmaxKernelCall& c) {
    return type(c.kind, exec.stream());
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Softmax<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
