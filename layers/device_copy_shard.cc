// copy_shard in GPU memory: one CUDA copy kernel over the shard interiors
// (layers/internal/copy_shard_impl.h). Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/space_ops.h"
#include "layers/copy_shard.h"
#include "layers/internal/copy_shard_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T)                                               \
  template void copy_shard<T, DeviceSpace>(const DistTensor<T, DeviceSpace>&, \
                                           DistTensor<T, DeviceSpace>&,       \
                                           const Exec<DeviceSpace>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
