#include "kernels/cudnn/cudnn_context.h"

#include <cuda_runtime_api.h>

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

void CudnnContext::reserve(std::size_t bytes) {
  if (bytes <= size_) return;
  if (workspace_ != nullptr) {
    internal::check_cuda(cudaFree(workspace_), "cudaFree of the workspace");
    workspace_ = nullptr;
    size_ = 0;
  }
  internal::check_cuda(cudaMalloc(&workspace_, bytes),
                       "cudaMalloc of a cuDNN workspace of ", bytes, " bytes");
  size_ = bytes;
}

void* CudnnContext::scratch(std::size_t bytes) const {
  if (bytes <= scratch_size_) return scratch_;
  if (scratch_ != nullptr) {
    // Work queued on the stream may still read the old array.
    internal::check_cuda(cudaStreamSynchronize(stream_),
                         "cudaStreamSynchronize before growing the scratch");
    internal::check_cuda(cudaFree(scratch_), "cudaFree of the scratch array");
    scratch_ = nullptr;
    scratch_size_ = 0;
  }
  internal::check_cuda(cudaMalloc(&scratch_, bytes),
                       "cudaMalloc of a scratch array of ", bytes, " bytes");
  scratch_size_ = bytes;
  return scratch_;
}

}  // namespace distconv
