#include "kernels/copy_view.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/internal/strided_runs.h"

namespace distconv {
namespace {

// Runs up to this long are copied by an inline loop: a channels-last
// slice of a few channels is a run per cell, too short to pay for a call.
constexpr Index kShortRunBytes = 256;

// Copies `bytes` bytes, a size the compiler knows for the common short
// runs (channels-last cells of 4 to 64 channels), so that each is a few
// vector moves rather than a call.
inline void copy_bytes(void* y, const void* x, std::size_t bytes) {
  switch (bytes) {
    case 16:
      std::memcpy(y, x, 16);
      return;
    case 32:
      std::memcpy(y, x, 32);
      return;
    case 64:
      std::memcpy(y, x, 64);
      return;
    case 128:
      std::memcpy(y, x, 128);
      return;
    case 256:
      std::memcpy(y, x, 256);
      return;
    default:
      std::memcpy(y, x, bytes);
  }
}

// Where both views' innermost run is contiguous and short (a channel slice
// of channels-last cells: concatenation, slicing), copies it run by run
// along the next dimension in one loop, so that a run costs a copy of a
// known size rather than a step of the walk; returns false (nothing
// copied) elsewhere. `d`: the views' walk (internal::pointwise_dims).
template <typename T>
bool copy_short_runs(const internal::PointwiseDims<2>& d, const T* a, T* b) {
  const int r = d.count;
  if (r < 2 || d.stride[0][r - 1] != 1 || d.stride[1][r - 1] != 1 ||
      d.extent[r - 1] * Index{sizeof(T)} > kShortRunBytes) {
    return false;
  }
  const std::size_t bytes = std::size_t(d.extent[r - 1]) * sizeof(T);
  internal::PointwiseDims<2> outer = d;  // the walk less its runs
  outer.count = r - 1;
  internal::for_each_run<2>(outer, [&](const std::array<Index, 2>& at,
                                       Index len,
                                       const std::array<Index, 2>& step) {
    const T* x = a + at[0];
    T* y = b + at[1];
    for (Index k = 0; k < len; ++k) {
      copy_bytes(static_cast<void*>(y + k * step[1]), x + k * step[0], bytes);
    }
  });
  return true;
}

}  // namespace

template <typename From, typename To>
void copy_view(StridedView<const From> from, StridedView<To> to) {
  require(from.extent() == to.extent(), ErrorKind::kShapeMismatch,
          "copy between views of extent ", from.extent(), " and ", to.extent());
  // The runs follow `from`'s strides and are as long as both views allow.
  const internal::PointwiseDims<2> dims = internal::pointwise_dims<2>(
      from.extent(), {from.strides(), to.strides()});
  const From* a = from.data();
  To* b = to.data();
  if constexpr (std::is_same_v<From, To>) {
    if (copy_short_runs<To>(dims, a, b)) return;
  }
  internal::for_each_run<2>(dims, [&](const std::array<Index, 2>& at, Index len,
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
