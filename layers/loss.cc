// The loss layer in host memory (Loss<T>): kernels/local_loss.h on the
// interiors. The layer itself is layers/internal/loss_impl.h.
#include "layers/loss.h"

#include <vector>

#include "distconv/element_types.h"
#include "kernels/local_loss.h"
#include "layers/internal/loss_impl.h"

namespace distconv {
namespace internal {

template <typename T>
class LossBackend<T, HostSpace> {
 public:
  explicit LossBackend(const LossOptions&) {}

  template <typename Target>
  std::vector<double> sums(const LossCellDesc& d, LossTerms what,
                           const StridedView<const T>& x,
                           const StridedView<const Target>& t) {
    return LocalLoss<T, Target>::sums(d, what, x, t);
  }

  template <typename Target>
  std::vector<double> sums_and_gradient(const LossCellDesc& d, double w,
                                        const StridedView<const T>& x,
                                        const StridedView<const Target>& t,
                                        const StridedView<T>& dx) {
    return LocalLoss<T, Target>::sums_and_gradient(d, w, x, t, dx);
  }

  template <typename Target>
  void gradient(const LossCellDesc& d, double w, const StridedView<const T>& x,
                const StridedView<const Target>& t, const StridedView<T>& dx) {
    LocalLoss<T, Target>::gradient(d, w, x, t, dx);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Loss<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
