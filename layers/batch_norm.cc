// The batch normalisation layer in host memory (BatchNorm<T>): the
// channels-last loops of LocalBatchNorm. The layer itself is
// layers/internal/batch_norm_impl.h.
#include "layers/batch_norm.h"

#include "distconv/element_types.h"
#include "kernels/local_batch_norm.h"
#include "layers/internal/batch_norm_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<BatchNormKernelCall, T, HostSpace> {
  using type = LocalBatchNorm<T>;
  static type make(const Exec<HostSpace>&, const BatchNormKernelCall& c) {
    return type(c.channels);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class BatchNorm<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
