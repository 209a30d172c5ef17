#include "layers/internal/device_staging.h"

#include "distconv/internal/cuda_check.h"
#include "layers/internal/host_staging.h"

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

void stage_to_host(const Exec<DeviceSpace>& exec, void* host,
                   const void* device, std::size_t bytes, const char* what) {
  stage_to_host(exec.stream(), host, device, bytes, what);
}

void stage_to_device(const Exec<DeviceSpace>& exec, void* device,
                     const void* host, std::size_t bytes, const char* what) {
  stage_to_device(exec.stream(), device, host, bytes, what);
}

void wait_for(const Exec<DeviceSpace>& exec, const char* what) {
  check_cuda(cudaStreamSynchronize(exec.stream()), what);
}

}  // namespace distconv::internal
