#include "kernels/space_ops.h"

#include "distconv/element_types.h"
#include "kernels/copy_view.h"
#include "kernels/internal/strided_runs.h"

namespace distconv {

template <typename T>
void zero(const Exec<HostSpace>&, const StridedView<T>& dst) {
  internal::zero(dst);
}

template <typename T>
void copy(const Exec<HostSpace>&, const StridedView<const T>& src,
          const StridedView<T>& dst) {
  copy_view<T>(src, dst);
}

template <typename T>
void sum(const Exec<HostSpace>&, const StridedView<T>& dst,
         const StridedView<const T>& a, const StridedView<const T>& b) {
  internal::transform([](T x, T y) { return T(x + y); }, dst, a, b);
}

#define DISTCONV_INSTANTIATE_MOVES(T)                                        \
  template void zero<T>(const Exec<HostSpace>&, const StridedView<T>&);      \
  template void copy<T>(const Exec<HostSpace>&, const StridedView<const T>&, \
                        const StridedView<T>&);
#define DISTCONV_INSTANTIATE_SUM(T)                                   \
  template void sum<T>(const Exec<HostSpace>&, const StridedView<T>&, \
                       const StridedView<const T>&,                   \
                       const StridedView<const T>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE_MOVES)
DISTCONV_FOR_EACH_LABEL_TYPE(DISTCONV_INSTANTIATE_MOVES)
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE_SUM)
#undef DISTCONV_INSTANTIATE_MOVES
#undef DISTCONV_INSTANTIATE_SUM

}  // namespace distconv
