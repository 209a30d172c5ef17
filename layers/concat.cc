// Concat and Slice in host memory; written once for every space in
// layers/internal/concat_impl.h.
#include "layers/concat.h"

#include "distconv/element_types.h"
#include "layers/internal/concat_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T) \
  template class Concat<T>;     \
  template class Slice<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
