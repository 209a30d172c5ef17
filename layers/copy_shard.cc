#include "layers/copy_shard.h"

#include "layers/internal/pointwise.h"

namespace distconv {

template <typename T>
void copy_shard(const DistTensor<T>& from, DistTensor<T>& to) {
  internal::require_distribution(to, from.layout().distribution(),
                                 "copy_shard: to");
  if (&from != &to) internal::copy(from.interior(), to.interior());
}

template void copy_shard<float>(const DistTensor<float>&, DistTensor<float>&);
template void copy_shard<double>(const DistTensor<double>&,
                                 DistTensor<double>&);

}  // namespace distconv
