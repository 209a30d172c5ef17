// The loss layer in host memory (Loss<T>): kernels/local_loss.h on the
// interiors. The layer itself is layers/internal/loss_impl.h.
#include "layers/loss.h"

#include "distconv/element_types.h"
#include "kernels/local_loss.h"
#include "layers/internal/loss_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<LossCellDesc, T, HostSpace> {
  using type = LocalLoss<T>;
  static type make(const Exec<HostSpace>&, const LossCellDesc& cells) {
    return type(cells);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Loss<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
