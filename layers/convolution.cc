// The convolution in host memory: the executor
// (layers/internal/convolution_impl.h) on oneDNN and reference kernels
// (layers/internal/host_conv_backend.h).
#include "layers/convolution.h"

#include "layers/internal/convolution_impl.h"
#include "layers/internal/host_conv_backend.h"

namespace distconv {

template class Convolution<float>;
template class Convolution<double>;
template class Convolution<bf16>;
template class Convolution<fp16>;

}  // namespace distconv
