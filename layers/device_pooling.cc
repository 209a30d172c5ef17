// The pooling layer in GPU memory (Pooling<T, DeviceSpace>): CudaPool
// kernels on the stream of the layer's Exec<DeviceSpace>, halos over the
// device
// transports. The executor itself is layers/internal/pooling_impl.h. Built
// only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/pool.h"
#include "kernels/cuda/space_ops.h"
#include "layers/internal/pooling_impl.h"
#include "layers/pooling.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<PoolKernelCall, T, DeviceSpace> {
  using type = CudaPool<T>;
  static type make(const Exec<DeviceSpace>& exec, const PoolKernelCall& k) {
    return type(k.desc, k.src_extent, k.src_strides, k.dst_extent,
                k.dst_strides, exec.stream());
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Pooling<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
