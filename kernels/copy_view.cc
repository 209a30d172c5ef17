#include "kernels/copy_view.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/internal/strided_runs.h"

namespace distconv {
namespace {

// Runs up to this long are copied by an inline loop: a channels-last
// slice of a few channels is a run per cell, too short to pay for a call.
constexpr Index kShortRunBytes = 256;

}  // namespace

template <typename From, typename To>
void copy_view(StridedView<const From> from, StridedView<To> to) {
  require(from.extent() == to.extent(), ErrorKind::kShapeMismatch,
          "copy between views of extent ", from.extent(), " and ", to.extent());
  // The runs follow `from`'s strides and are as long as both views allow.
  const From* a = from.data();
  To* b = to.data();
  internal::for_each_run<2>(
      from.extent(), {from.strides(), to.strides()},
      [&](const std::array<Index, 2>& at, Index len,
          const std::array<Index, 2>& step) {
        const From* x = a + at[0];
        To* y = b + at[1];
        if (step[0] == 1 && step[1] == 1) {  // unit strides: vectorised
          if constexpr (std::is_same_v<From, To>) {
            if (len * Index{sizeof(To)} <= kShortRunBytes) {
#pragma omp simd
              for (Index k = 0; k < len; ++k) y[k] = x[k];
            } else {
              std::copy_n(x, len, y);
            }
          } else {
            convert(x, static_cast<std::size_t>(len), y);
          }
        } else {
          for (Index k = 0; k < len; ++k) y[k * step[1]] = x[k * step[0]];
        }
      });
}

#define DISTCONV_INSTANTIATE(T) \
  template void copy_view(StridedView<const T>, StridedView<T>);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
DISTCONV_FOR_EACH_LABEL_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE
// A narrow type's conversions to and from fp32.
#define DISTCONV_INSTANTIATE(T)                                      \
  template void copy_view(StridedView<const T>, StridedView<float>); \
  template void copy_view(StridedView<const float>, StridedView<T>);
DISTCONV_FOR_EACH_NARROW_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
