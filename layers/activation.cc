// The activation layer in host memory (Activation<T>): vectorised loops
// over the interiors' contiguous runs. The layer itself is
// layers/internal/activation_impl.h.
#include "layers/activation.h"

#include "distconv/element_types.h"
#include "kernels/activation_ops.h"
#include "layers/internal/activation_impl.h"
#include "layers/internal/pointwise.h"

namespace distconv {
namespace internal {

template <typename T>
struct ActivationBackend<T, HostSpace> {
  using S = Compute<T>;
  static void forward(const ActivationDesc& desc, const ActivationOptions&,
                      const StridedView<T>& dst,
                      const StridedView<const T>& src) {
    if (desc.kind == ActivationKind::kRelu) {
      transform(ReluForward<T>{}, dst, src);
    } else {
      transform(LeakyReluForward<T, S>{static_cast<S>(desc.negative_slope)},
                dst, src);
    }
  }
  static void backward(const ActivationDesc& desc, const ActivationOptions&,
                       const StridedView<T>& diff_src,
                       const StridedView<const T>& sign_of,
                       const StridedView<const T>& diff_dst) {
    if (desc.kind == ActivationKind::kRelu) {
      transform(ReluBackward<T>{}, diff_src, sign_of, diff_dst);
    } else {
      transform(LeakyReluBackward<T, S>{static_cast<S>(desc.negative_slope)},
                diff_src, sign_of, diff_dst);
    }
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Activation<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
