// The upsampling layer in host memory (Upsample<T>): the loops of
// kernels/local_upsample.h. The layer itself is
// layers/internal/upsample_impl.h.
#include "layers/upsample.h"

#include "distconv/element_types.h"
#include "kernels/local_upsample.h"
#include "layers/internal/upsample_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct UpsampleBackend<T, HostSpace> {
  static void forward(const UpsampleOptions&, const UpsampleFactors& factors,
                      const StridedView<const T>& src,
                      const StridedView<T>& dst) {
    LocalUpsample<T>::forward(factors, src, dst);
  }
  static void backward(const UpsampleOptions&, const UpsampleFactors& factors,
                       const StridedView<const T>& diff_dst,
                       const StridedView<T>& diff_src) {
    LocalUpsample<T>::backward(factors, diff_dst, diff_src);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Upsample<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
