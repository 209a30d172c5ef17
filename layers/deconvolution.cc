// The transposed convolution in host memory: the executor
// (layers/internal/deconvolution_impl.h) on oneDNN and reference kernels
// (layers/internal/host_conv_backend.h).
#include "layers/deconvolution.h"

#include "layers/internal/deconvolution_impl.h"
#include "layers/internal/host_conv_backend.h"

namespace distconv {

template class Deconvolution<float>;
template class Deconvolution<double>;
template class Deconvolution<bf16>;
template class Deconvolution<fp16>;

}  // namespace distconv
