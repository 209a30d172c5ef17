// The batch normalisation layer in host memory (BatchNorm<T>): the
// channels-last loops of LocalBatchNorm. The layer itself is
// layers/internal/batch_norm_impl.h.
#include "layers/batch_norm.h"

#include <algorithm>
#include <vector>

#include "distconv/element_types.h"
#include "kernels/local_batch_norm.h"
#include "layers/internal/batch_norm_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct BatchNormBackend<T, HostSpace> {
  using Kernel = LocalBatchNorm<T>;
  using P = Compute<T>;
  static Kernel kernel(Index channels, const BatchNormDeviceOptions&) {
    return Kernel(channels);
  }
  static const P* read(const BatchNormDeviceOptions&, const P* p, Index,
                       std::vector<P>&) {
    return p;
  }
  static void write(const BatchNormDeviceOptions&, const std::vector<P>& from,
                    P* to) {
    std::copy(from.begin(), from.end(), to);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class BatchNorm<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
