// Concat and Slice in GPU memory (layers/concat.h); written once for every
// space in layers/internal/concat_impl.h. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/space_ops.h"
#include "layers/concat.h"
#include "layers/internal/concat_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T)          \
  template class Concat<T, DeviceSpace>; \
  template class Slice<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
