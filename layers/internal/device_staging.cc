#include "layers/internal/device_staging.h"

#include "distconv/internal/cuda_check.h"

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

}  // namespace distconv::internal
