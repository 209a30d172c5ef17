#include "distconv/device_space.h"

#include <cuda_runtime.h>

#include "distconv/error.h"

namespace distconv {
namespace {
void check_cuda(cudaError_t code, const char* call, std::size_t bytes) {
  require(code == cudaSuccess, ErrorKind::kUnsupported, call, " of ", bytes,
          " bytes failed: ", cudaGetErrorString(code));
}
}  // namespace

void* DeviceSpace::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc", bytes);
  const cudaError_t zero = cudaMemset(p, 0, bytes);
  if (zero != cudaSuccess) cudaFree(p);
  check_cuda(zero, "cudaMemset", bytes);
  return p;
}

void DeviceSpace::deallocate(void* p) noexcept {
  if (p != nullptr) cudaFree(p);
}

void DeviceSpace::copy_to_device(void* dst, const void* src,
                                 std::size_t bytes) {
  check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
             "cudaMemcpy to device", bytes);
}

void DeviceSpace::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
             "cudaMemcpy to host", bytes);
}

int DeviceSpace::device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

}  // namespace distconv
