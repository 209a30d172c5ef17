#include "kernels/reference/activation.h"

#include <cmath>

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

template void activation_fwd<float>(const ActivationDesc&, Index,
                                    const float*, float*);
template void activation_fwd<double>(const ActivationDesc&, Index,
                                     const double*, double*);
template void activation_bwd<float>(const ActivationDesc&, Index,
                                    const float*, const float*, float*);
template void activation_bwd<double>(const ActivationDesc&, Index,
                                     const double*, const double*, double*);

}  // namespace distconv::reference
