#include "kernels/local_activation.h"

#include "distconv/bf16.h"
#include "distconv/element_types.h"
#include "kernels/activation_ops.h"
#include "kernels/internal/strided_runs.h"

namespace distconv {

template <typename T>
void activation_forward(const Exec<HostSpace>&, const ActivationDesc& desc,
                        const StridedView<T>& dst,
                        const StridedView<const T>& src) {
  using S = Compute<T>;
  if (desc.kind == ActivationKind::kRelu) {
    internal::transform(ReluForward<T>{}, dst, src);
  } else {
    internal::transform(
        LeakyReluForward<T, S>{static_cast<S>(desc.negative_slope)}, dst, src);
  }
}

template <typename T>
void activation_backward(const Exec<HostSpace>&, const ActivationDesc& desc,
                         const StridedView<T>& diff_src,
                         const StridedView<const T>& sign_of,
                         const StridedView<const T>& diff_dst) {
  using S = Compute<T>;
  if (desc.kind == ActivationKind::kRelu) {
    internal::transform(ReluBackward<T>{}, diff_src, sign_of, diff_dst);
  } else {
    internal::transform(
        LeakyReluBackward<T, S>{static_cast<S>(desc.negative_slope)}, diff_src,
        sign_of, diff_dst);
  }
}

#define DISTCONV_INSTANTIATE(T)                                             \
  template void activation_forward<T>(                                      \
      const Exec<HostSpace>&, const ActivationDesc&, const StridedView<T>&, \
      const StridedView<const T>&);                                         \
  template void activation_backward<T>(                                     \
      const Exec<HostSpace>&, const ActivationDesc&, const StridedView<T>&, \
      const StridedView<const T>&, const StridedView<const T>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
