// add and add_backward in host memory; written once for every space in
// layers/internal/add_impl.h.
#include "layers/add.h"

#include "distconv/element_types.h"
#include "layers/internal/add_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T)                                               \
  template void add<T, HostSpace>(const DistTensor<T>&, const DistTensor<T>&, \
                                  DistTensor<T>&, const Exec<HostSpace>&);    \
  template void add_backward<T, HostSpace>(const DistTensor<T>&,              \
                                           DistTensor<T>&, DistTensor<T>&,    \
                                           const Exec<HostSpace>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
