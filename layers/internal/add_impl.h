// Internal: add and add_backward (layers/add.h) written once for every
// memory space, on the space's primitives (kernels/space_ops.h) in the
// caller's execution context. Included by the .cc that instantiates
// them for a space: layers/add.cc (host), layers/device_add.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_ADD_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_ADD_IMPL_H_

#include "layers/add.h"
#include "layers/internal/pointwise.h"

namespace distconv {

template <typename T, typename Space>
void add(const DistTensor<T, Space>& a, const DistTensor<T, Space>& b,
         DistTensor<T, Space>& dst, const Exec<Space>& exec) {
  const Distribution& want = a.layout().distribution();
  internal::require_distribution(b, want, "add: b");
  internal::require_distribution(dst, want, "add: dst");
  sum<T>(exec, dst.interior(), a.interior(), b.interior());
}

template <typename T, typename Space>
void add_backward(const DistTensor<T, Space>& diff_dst,
                  DistTensor<T, Space>& diff_a, DistTensor<T, Space>& diff_b,
                  const Exec<Space>& exec) {
  const Distribution& want = diff_dst.layout().distribution();
  internal::require_distribution(diff_a, want, "add backward: diff_a");
  internal::require_distribution(diff_b, want, "add backward: diff_b");
  for (DistTensor<T, Space>* d : {&diff_a, &diff_b}) {
    if (d != &diff_dst) {
      copy<T>(exec, diff_dst.interior(), d->interior());
    }
  }
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_ADD_IMPL_H_
