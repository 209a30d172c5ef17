#include "kernels/local_dropout.h"

#include "distconv/element_types.h"

namespace distconv {

template <typename T>
void dropout_apply(const StridedView<const T>& in, const StridedView<T>& out,
                   const Shape& lower, const Shape& global, DropoutKind kind,
                   double p, std::uint64_t seed) {
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  const bool channels = kind == DropoutKind::kChannels;
  out.for_each([&](const Shape& i, T& y) {
    std::uint64_t index = 0;
    if (channels) {
      index = static_cast<std::uint64_t>((i[0] + lower[0]) * global[1] + i[1] +
                                         lower[1]);
    } else {
      for (int d = 0; d < global.ndims(); ++d) {
        index = index * static_cast<std::uint64_t>(global[d]) +
                static_cast<std::uint64_t>(i[d] + lower[d]);
      }
    }
    y = dropout_keep(seed, index, p) ? T(double(in(i)) * scale) : T(0);
  });
}

#define DISTCONV_INSTANTIATE(T)                                              \
  template void dropout_apply<T>(const StridedView<const T>&,               \
                                 const StridedView<T>&, const Shape&,        \
                                 const Shape&, DropoutKind, double,          \
                                 std::uint64_t);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
