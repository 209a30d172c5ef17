// The transposed convolution in host memory: the executor
// (layers/internal/deconvolution_impl.h) on oneDNN and reference kernels
// (layers/internal/host_conv_kernels.h).
#include "layers/deconvolution.h"

#include "distconv/element_types.h"
#include "layers/internal/deconvolution_impl.h"
#include "layers/internal/host_conv_kernels.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T) template class Deconvolution<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
