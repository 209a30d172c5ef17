#include "kernels/reference/activation.h"

#include <cmath>

#include "distconv/element_types.h"

namespace distconv::reference {

template <typename T>
void activation_fwd(const ActivationDesc& desc, Index n, const T* src,
                    T* dst) {
  desc.validate();
  const T slope = static_cast<T>(desc.negative_slope);
  for (Index i = 0; i < n; ++i) {
    const T x = src[i];
    if (x > 0 || std::isnan(x)) {
      dst[i] = x;
    } else {
      dst[i] = desc.kind == ActivationKind::kRelu ? T(0) : slope * x;
    }
  }
}

template <typename T>
void activation_bwd(const ActivationDesc& desc, Index n, const T* src,
                    const T* diff_dst, T* diff_src) {
  desc.validate();
  const T slope = static_cast<T>(desc.negative_slope);
  for (Index i = 0; i < n; ++i) {
    if (src[i] > 0) {
      diff_src[i] = diff_dst[i];
    } else {
      diff_src[i] =
          desc.kind == ActivationKind::kRelu ? T(0) : slope * diff_dst[i];
    }
  }
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template void activation_fwd<T>(const ActivationDesc&, Index, const T*, T*); \
  template void activation_bwd<T>(const ActivationDesc&, Index, const T*,      \
                                  const T*, T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
