// Reference activation kernels: plain loops, the oracle the distributed
// activation is tested against. Element-wise, so the arrays' layout does
// not matter: n elements each. float and double.
//
//   reference::activation_fwd(ActivationDesc::relu(), n, x, y);
//   reference::activation_bwd(ActivationDesc::relu(), n, x, dy, dx);
#ifndef DISTCONV_KERNELS_REFERENCE_ACTIVATION_H_
#define DISTCONV_KERNELS_REFERENCE_ACTIVATION_H_

#include "distconv/activation_desc.h"
#include "distconv/shape.h"

namespace distconv::reference {

// dst = activation(src); validates the description.
template <typename T>
void activation_fwd(const ActivationDesc& desc, Index n, const T* src,
                    T* dst);

// diff_src = activation'(src) * diff_dst, from the input `src`.
template <typename T>
void activation_bwd(const ActivationDesc& desc, Index n, const T* src,
                    const T* diff_dst, T* diff_src);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_ACTIVATION_H_
