// The upsampling layer in host memory (Upsample<T>): the loops of
// kernels/local_upsample.h. The layer itself is
// layers/internal/upsample_impl.h.
#include "layers/upsample.h"

#include "distconv/element_types.h"
#include "kernels/local_upsample.h"
#include "layers/internal/upsample_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T) template class Upsample<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
