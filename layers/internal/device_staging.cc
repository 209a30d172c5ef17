#include "layers/internal/device_staging.h"

#include <vector>

#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "layers/internal/host_values.h"

namespace distconv::internal {

void stage_to_host(cudaStream_t stream, void* host, const void* device,
                   std::size_t bytes, const char* what) {
  if (bytes > 0) {
    check_cuda(
        cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream),
        what, ": copying to the host");
  }
  check_cuda(cudaStreamSynchronize(stream), what, ": waiting for the stream");
}

void stage_to_device(cudaStream_t stream, void* device, const void* host,
                     std::size_t bytes, const char* what) {
  if (bytes == 0) return;
  check_cuda(
      cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream),
      what, ": copying to the GPU");
}

template <typename P>
const P* host_values(const Exec<DeviceSpace>& exec, const P* p, Index n,
                     std::vector<P>& copy, const char* what) {
  copy.resize(static_cast<std::size_t>(n));
  stage_to_host(exec.stream(), copy.data(), p, sizeof(P) * n, what);
  return copy.data();
}

template <typename P>
void store_host_values(const Exec<DeviceSpace>& exec,
                       const std::vector<P>& from, P* to, const char* what) {
  stage_to_device(exec.stream(), to, from.data(), sizeof(P) * from.size(),
                  what);
}

#define DISTCONV_INSTANTIATE(P)                                            \
  template const P* host_values(const Exec<DeviceSpace>&, const P*, Index, \
                                std::vector<P>&, const char*);             \
  template void store_host_values(const Exec<DeviceSpace>&,                \
                                  const std::vector<P>&, P*, const char*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::internal
