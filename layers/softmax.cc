// The softmax layer in host memory (Softmax<T>): kernels/local_softmax.h
// on the interiors. The layer itself is layers/internal/softmax_impl.h.
#include "layers/softmax.h"

#include "distconv/element_types.h"
#include "kernels/local_softmax.h"
#include "layers/internal/softmax_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<SoftmaxKernelCall, T, HostSpace> {
  using type = LocalSoftmax<T>;
  static type make(const Exec<HostSpace>&, const SoftmaxKernelCall& c) {
    return type(c.kind, c.extent);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Softmax<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
