// Redistribution in GPU memory (Redistribution<T, DeviceSpace>): the host
// layer's plan and messages (layers/internal/redistribute_impl.h), boxes
// packed and unpacked by the element-wise CUDA copies, messages staged
// through the host on the stream of the layer's Exec<DeviceSpace>
// (layers/internal/host_staging.h).
// Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/space_ops.h"
#include "layers/internal/redistribute_impl.h"
#include "layers/redistribute.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T) template class Redistribution<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
