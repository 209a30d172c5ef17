// add and add_backward in GPU memory (layers/add.h); written once for every
// space in layers/internal/add_impl.h. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/space_ops.h"
#include "layers/add.h"
#include "layers/internal/add_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T)                                             \
  template void add<T, DeviceSpace>(                                        \
      const DistTensor<T, DeviceSpace>&, const DistTensor<T, DeviceSpace>&, \
      DistTensor<T, DeviceSpace>&, const Exec<DeviceSpace>&);               \
  template void add_backward<T, DeviceSpace>(                               \
      const DistTensor<T, DeviceSpace>&, DistTensor<T, DeviceSpace>&,       \
      DistTensor<T, DeviceSpace>&, const Exec<DeviceSpace>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
