// The activation layer in GPU memory (Activation<T, DeviceSpace>): CUDA
// kernels over the interiors (kernels/cuda/space_ops.h), on the stream of
// the layer's Exec<DeviceSpace>. The layer itself is
// layers/internal/activation_impl.h. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/space_ops.h"
#include "layers/activation.h"
#include "layers/internal/activation_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T) template class Activation<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
