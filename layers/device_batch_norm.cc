// The batch normalisation layer in GPU memory (BatchNorm<T, DeviceSpace>):
// CudaBatchNorm's passes on the stream of the device options; scale, shift
// and their gradients in device memory. The layer itself is
// layers/internal/batch_norm_impl.h. Built only with --config=cuda.
#include <vector>

#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/batch_norm.h"
#include "layers/batch_norm.h"
#include "layers/internal/batch_norm_impl.h"
#include "layers/internal/device_staging.h"

namespace distconv {
namespace internal {

template <typename T>
struct BatchNormBackend<T, DeviceSpace> {
  using Kernel = CudaBatchNorm<T>;
  using P = Compute<T>;  // scale, shift and their gradients
  static Kernel kernel(Index channels, const BatchNormDeviceOptions& d) {
    return Kernel(channels, d.stream);
  }
  // The device array's values, once the work queued before is done.
  static const P* read(const BatchNormDeviceOptions& d, const P* p, Index n,
                       std::vector<P>& copy) {
    copy.resize(static_cast<size_t>(n));
    stage_to_host(d.stream, copy.data(), p, sizeof(P) * n,
                  "batch normalisation parameters");
    return copy.data();
  }
  // Queued on the stream; returns once `from` is staged (pageable memory).
  static void write(const BatchNormDeviceOptions& d,
                    const std::vector<P>& from, P* to) {
    stage_to_device(d.stream, to, from.data(), sizeof(P) * from.size(),
                    "batch normalisation gradients");
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class BatchNorm<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
