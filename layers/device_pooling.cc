// The pooling layer in GPU memory (Pooling<T, DeviceSpace>): CudaPool
// kernels on the stream of the halo options, halos over the device
// transports. The executor itself is layers/internal/pooling_impl.h. Built
// only with --config=cuda.
#include <cuda_runtime_api.h>

#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/pool.h"
#include "layers/internal/pooling_impl.h"
#include "layers/pooling.h"

namespace distconv {
namespace internal {

template <typename T>
struct PoolBackend<T, DeviceSpace> {
  using Kernel = CudaPool<T>;
  static Kernel kernel(const PoolKernelCall& k, const HaloSetupOptions& h) {
    return Kernel(k.desc, k.src_extent, k.src_strides, k.dst_extent,
                  k.dst_strides, h.stream);
  }
  // The whole local buffer (its cells are contiguous), on the stream.
  static void zero(const HaloSetupOptions& h, DistTensor<T, DeviceSpace>& t) {
    check_cuda(cudaMemsetAsync(t.data(), 0, sizeof(T) * t.size(), h.stream),
               "cudaMemsetAsync of a pooling gradient");
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Pooling<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
