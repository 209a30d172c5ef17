#include "kernels/space_ops.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/internal/target_clones.h"
#include "kernels/copy_view.h"
#include "kernels/internal/cell_walk.h"
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

namespace {

// y = a + b on n contiguous bf16, in fp32, rounded once, built per
// instruction set: rounding 32 to 16 bits does not vectorise with SSE2
// alone, and in the baseline build the sum ran at half fp32's speed.
DISTCONV_CLONES void sum_run(const bf16* a, const bf16* b, std::size_t n,
                             bf16* y) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t bits = bf16(float(a[i]) + float(b[i])).bits();
    std::memcpy(static_cast<void*>(y + i), &bits, sizeof bits);
  }
}

}  // namespace

template <typename T>
void sum(const Exec<HostSpace>&, const StridedView<T>& dst,
         const StridedView<const T>& a, const StridedView<const T>& b) {
  const auto op = [](T x, T y) { return T(x + y); };
  if constexpr (std::is_same_v<T, bf16>) {
    internal::transform_runs(
        [](Index n, bf16* y, const bf16* x, const bf16* z) {
          sum_run(x, z, std::size_t(n), y);
        },
        op, dst, a, b);
  } else {
    internal::transform(op, dst, a, b);
  }
}

template <typename T>
void fill_per_channel(const Exec<HostSpace>& exec, const StridedView<T>& dst,
                      const Compute<T>* values) {
  zero(exec, dst);
  if (values != nullptr) internal::add_per_channel(dst, values);
}

template <typename T>
void add_per_channel(const Exec<HostSpace>&, const StridedView<T>& dst,
                     const Compute<T>* values) {
  internal::add_per_channel(dst, values);
}

template <typename T>
void sum_per_channel(const Exec<HostSpace>&, const StridedView<const T>& src,
                     Compute<T>* sums) {
  internal::sum_per_channel(src, sums);
}

#define DISTCONV_INSTANTIATE_MOVES(T)                                        \
  template void zero<T>(const Exec<HostSpace>&, const StridedView<T>&);      \
  template void copy<T>(const Exec<HostSpace>&, const StridedView<const T>&, \
                        const StridedView<T>&);
#define DISTCONV_INSTANTIATE_SUM(T)                                   \
  template void sum<T>(const Exec<HostSpace>&, const StridedView<T>&, \
                       const StridedView<const T>&,                   \
                       const StridedView<const T>&);
#define DISTCONV_INSTANTIATE_PER_CHANNEL(T)                                    \
  template void fill_per_channel<T>(const Exec<HostSpace>&,                    \
                                    const StridedView<T>&, const Compute<T>*); \
  template void add_per_channel<T>(const Exec<HostSpace>&,                     \
                                   const StridedView<T>&, const Compute<T>*);  \
  template void sum_per_channel<T>(const Exec<HostSpace>&,                     \
                                   const StridedView<const T>&, Compute<T>*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE_MOVES)
DISTCONV_FOR_EACH_LABEL_TYPE(DISTCONV_INSTANTIATE_MOVES)
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE_SUM)
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE_PER_CHANNEL)
#undef DISTCONV_INSTANTIATE_PER_CHANNEL
#undef DISTCONV_INSTANTIATE_MOVES
#undef DISTCONV_INSTANTIATE_SUM

}  // namespace distconv
