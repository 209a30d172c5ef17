#include "distconv/device_space.h"

#include <cuda_runtime.h>

#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"

namespace distconv {

using internal::check_cuda;

void* DeviceSpace::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc of ", bytes, " bytes");
  // cudaMemset may return before it is done; a kernel on a non-blocking
  // stream must not see the buffer before it is zero.
  cudaError_t zero = cudaMemset(p, 0, bytes);
  if (zero == cudaSuccess) zero = cudaStreamSynchronize(nullptr);
  if (zero != cudaSuccess) cudaFree(p);
  check_cuda(zero, "cudaMemset of ", bytes, " bytes");
  return p;
}

void DeviceSpace::deallocate(void* p) noexcept {
  if (p != nullptr) cudaFree(p);
}

void DeviceSpace::copy_to_device(void* dst, const void* src,
                                 std::size_t bytes) {
  check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
             "cudaMemcpy of ", bytes, " bytes to the device");
  // From pageable memory cudaMemcpy may return before the data has landed.
  check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
}

void DeviceSpace::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
             "cudaMemcpy of ", bytes, " bytes to the host");
}

int DeviceSpace::device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

int DeviceSpace::use_device_of_rank(int rank) {
  const int count = device_count();
  require(count > 0, ErrorKind::kUnsupported,
          "no CUDA device on this machine");
  const int device = rank % count;
  check_cuda(cudaSetDevice(device), "cudaSetDevice(", device, ")");
  return device;
}

}  // namespace distconv
