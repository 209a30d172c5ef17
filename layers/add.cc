// add and add_backward in host memory; written once for every space in
// layers/internal/add_impl.h.
#include "layers/add.h"

#include "layers/internal/add_impl.h"

namespace distconv {

#define DISTCONV_INSTANTIATE(T)                                             \
  template void add<T, HostSpace>(const DistTensor<T>&, const DistTensor<T>&, \
                                  DistTensor<T>&, const AddOptions&);       \
  template void add_backward<T, HostSpace>(                                 \
      const DistTensor<T>&, DistTensor<T>&, DistTensor<T>&, const AddOptions&);
DISTCONV_INSTANTIATE(float)
DISTCONV_INSTANTIATE(double)
DISTCONV_INSTANTIATE(bf16)
DISTCONV_INSTANTIATE(fp16)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
