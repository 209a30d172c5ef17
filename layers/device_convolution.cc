// The convolution in GPU memory (Convolution<T, DeviceSpace>): the
// executor (layers/internal/convolution_impl.h) on cuDNN
// (layers/internal/device_conv_backend.h), halos over the device
// transports. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "layers/convolution.h"
#include "layers/internal/convolution_impl.h"
#include "layers/internal/device_conv_backend.h"

namespace distconv {

template class Convolution<float, DeviceSpace>;
template class Convolution<double, DeviceSpace>;
template class Convolution<bf16, DeviceSpace>;
template class Convolution<fp16, DeviceSpace>;

}  // namespace distconv
