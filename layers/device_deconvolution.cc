// The transposed convolution in GPU memory (Deconvolution<T,
// DeviceSpace>): the executor (layers/internal/deconvolution_impl.h) on
// cuDNN (layers/internal/device_conv_backend.h), halos over the device
// transports. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "layers/deconvolution.h"
#include "layers/internal/deconvolution_impl.h"
#include "layers/internal/device_conv_backend.h"

namespace distconv {

template class Deconvolution<float, DeviceSpace>;
template class Deconvolution<double, DeviceSpace>;
template class Deconvolution<bf16, DeviceSpace>;
template class Deconvolution<fp16, DeviceSpace>;

}  // namespace distconv
