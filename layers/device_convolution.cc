// The convolution in GPU memory (Convolution<T, DeviceSpace>): the
// executor (layers/internal/convolution_impl.h) on cuDNN
// (layers/internal/device_conv_kernels.h), halos over the device
// transports. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "layers/convolution.h"
#include "layers/internal/convolution_impl.h"
#include "layers/internal/device_conv_kernels.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T) template class Convolution<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
