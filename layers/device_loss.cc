// The loss layer in GPU memory (Loss<T, DeviceSpace>): kernels/cuda/loss.h
// over the interiors, on the layer's Exec<DeviceSpace>; each sample's sums come
// back to the host (one wait for the stream) for the reductions over ranks. The
// layer itself is layers/internal/loss_impl.h. Built only with
// --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/loss.h"
#include "layers/internal/loss_impl.h"
#include "layers/loss.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<LossCellDesc, T, DeviceSpace> {
  using type = CudaLoss<T>;
  static type make(const Exec<DeviceSpace>& exec, const LossCellDesc& cells) {
    return type(cells, exec.stream());
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Loss<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
