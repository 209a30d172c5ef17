// The batch normalisation layer in GPU memory (BatchNorm<T, DeviceSpace>):
// CudaBatchNorm's passes on the stream of the layer's Exec<DeviceSpace>;
// scale, shift
// and their gradients in device memory, staged through the host
// (layers/internal/host_staging.h). The layer itself is
// layers/internal/batch_norm_impl.h. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/batch_norm.h"
#include "layers/batch_norm.h"
#include "layers/internal/batch_norm_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<BatchNormKernelCall, T, DeviceSpace> {
  using type = CudaBatchNorm<T>;
  static type make(const Exec<DeviceSpace>& exec,
                   const BatchNormKernelCall& c) {
    return type(c.channels, exec.stream());
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class BatchNorm<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
