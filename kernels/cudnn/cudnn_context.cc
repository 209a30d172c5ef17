#include "kernels/cudnn/cudnn_context.h"

#include <cuda_runtime_api.h>

#include <memory>

#include "distconv/internal/cuda_check.h"

namespace distconv {

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw Error(ErrorKind::kDevice,
              internal::str(what, " failed: ", cudnnGetErrorString(status)));
}

CudnnContext::CudnnContext(cudaStream_t stream) : stream_(stream) {
  check_cudnn(cudnnCreate(&handle_), "cudnnCreate");
  try {
    check_cudnn(cudnnSetStream(handle_, stream), "cudnnSetStream");
  } catch (...) {
    cudnnDestroy(handle_);
    throw;
  }
}

CudnnContext::~CudnnContext() {
  if (workspace_ != nullptr) cudaFree(workspace_);
  if (scratch_ != nullptr) cudaFree(scratch_);
  cudnnDestroy(handle_);
}

namespace {

// Makes `array` (of `size` bytes) at least `bytes` large, once work queued
// on `stream` is done with the old one.
void grow(cudaStream_t stream, void*& array, std::size_t& size,
          std::size_t bytes, const char* what) {
  if (bytes <= size) return;
  if (array != nullptr) {
    internal::check_cuda(cudaStreamSynchronize(stream),
                         "cudaStreamSynchronize before growing the ", what);
    internal::check_cuda(cudaFree(array), "cudaFree of the ", what);
    array = nullptr;
    size = 0;
  }
  internal::check_cuda(cudaMalloc(&array, bytes), "cudaMalloc of a ", what,
                       " of ", bytes, " bytes");
  size = bytes;
}

}  // namespace

void CudnnContext::reserve(std::size_t bytes) {
  grow(stream_, workspace_, size_, bytes, "cuDNN workspace");
}

void* CudnnContext::scratch(std::size_t bytes) const {
  grow(stream_, scratch_, scratch_size_, bytes, "scratch array");
  return scratch_;
}

CudnnContext& cudnn_context(const Exec<DeviceSpace>& exec) {
  std::shared_ptr<void>& slot = exec.resources().cudnn;
  if (!slot) slot = std::make_shared<CudnnContext>(exec.stream());
  return *static_cast<CudnnContext*>(slot.get());
}

}  // namespace distconv
