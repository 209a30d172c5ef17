// The batch normalisation layer in GPU memory (BatchNorm<T, DeviceSpace>):
// CudaBatchNorm's passes on the stream of the device options; scale, shift
// and their gradients in device memory. The layer itself is
// layers/internal/batch_norm_impl.h. Built only with --config=cuda.
#include <cuda_runtime_api.h>

#include <vector>

#include "distconv/device_space.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/batch_norm.h"
#include "layers/batch_norm.h"
#include "layers/internal/batch_norm_impl.h"

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
    check_cuda(cudaMemcpyAsync(copy.data(), p, sizeof(P) * n,
                               cudaMemcpyDeviceToHost, d.stream),
               "copying batch normalisation parameters to the host");
    check_cuda(cudaStreamSynchronize(d.stream),
               "waiting for batch normalisation parameters");
    return copy.data();
  }
  // Queued on the stream; returns once `from` is staged (pageable memory).
  static void write(const BatchNormDeviceOptions& d,
                    const std::vector<P>& from, P* to) {
    check_cuda(cudaMemcpyAsync(to, from.data(), sizeof(P) * from.size(),
                               cudaMemcpyHostToDevice, d.stream),
               "copying batch normalisation gradients to the device");
  }
};

}  // namespace internal

template class BatchNorm<float, DeviceSpace>;
template class BatchNorm<double, DeviceSpace>;
template class BatchNorm<bf16, DeviceSpace>;

}  // namespace distconv
