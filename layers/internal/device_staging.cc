// The GPU's functions of layers/internal/host_staging.h: copies between
// device memory and pageable host memory on the context's stream. Built
// only with --config=cuda.
#include <cuda_runtime_api.h>

#include "distconv/internal/cuda_check.h"
#include "layers/internal/host_staging.h"

namespace distconv::internal {

void stage_to_host(const Exec<DeviceSpace>& exec, void* host,
                   const void* device, std::size_t bytes, const char* what) {
  if (bytes > 0) {
    check_cuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                               exec.stream()),
               what, ": copying to the host");
  }
  check_cuda(cudaStreamSynchronize(exec.stream()), what,
             ": waiting for the stream");
}

void stage_to_device(const Exec<DeviceSpace>& exec, void* device,
                     const void* host, std::size_t bytes, const char* what) {
  if (bytes == 0) return;
  check_cuda(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                             exec.stream()),
             what, ": copying to the GPU");
}

void wait_for(const Exec<DeviceSpace>& exec, const char* what) {
  check_cuda(cudaStreamSynchronize(exec.stream()), what);
}

}  // namespace distconv::internal
