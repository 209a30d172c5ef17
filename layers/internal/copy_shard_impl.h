// Internal: copy_shard's tensor overload for every memory space
// (//layers:copy_shard, //layers:device_copy_shard), on the space's
// copy (kernels/space_ops.h).
#ifndef DISTCONV_LAYERS_INTERNAL_COPY_SHARD_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_COPY_SHARD_IMPL_H_

#include "layers/copy_shard.h"
#include "layers/internal/pointwise.h"

namespace distconv {

template <typename T, typename Space>
void copy_shard(const DistTensor<T, Space>& from, DistTensor<T, Space>& to,
                const Exec<Space>& exec) {
  internal::require_distribution(to, from.layout().distribution(),
                                 "copy_shard: to");
  if (&from != &to) {
    copy<T>(exec, from.interior(), to.interior());
  }
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_COPY_SHARD_IMPL_H_
