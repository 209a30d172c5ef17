// The activation layer in host memory (Activation<T>): vectorised loops
// over the interiors' contiguous runs (kernels/local_activation.h). The
// layer itself is layers/internal/activation_impl.h.
#include "layers/activation.h"

#include "distconv/element_types.h"
#include "kernels/local_activation.h"
#include "layers/internal/activation_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T) template class Activation<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
