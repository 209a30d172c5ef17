// CudnnContext: what the cuDNN kernels of one layer share: a cuDNN handle
// bound to the caller's stream, and one workspace, grown to the largest
// size any of its kernels asked for when they were made (never while they
// run). Built only with --config=cuda.
//
//   CudnnContext ctx(stream);                  // stream: a cudaStream_t
//   CudnnConv<float> conv(ctx, desc, ...);     // reserves its workspace
//   conv.forward(x, w, b, y);                  // queued on `stream`
//
// Not thread-safe: the kernels of one context run one after another on its
// stream. The stream must outlive the context.
//
// The layers take theirs from their Exec<DeviceSpace> (distconv/exec.h):
// cudnn_context(exec) makes it on first use, bound to the context's
// stream, and every copy of that Exec shares it (one handle, one
// workspace).
#ifndef DISTCONV_KERNELS_CUDNN_CUDNN_CONTEXT_H_
#define DISTCONV_KERNELS_CUDNN_CUDNN_CONTEXT_H_

#include <cudnn.h>

#include <cstddef>

#include "distconv/error.h"
#include "distconv/exec.h"

namespace distconv {

// Turns a failed cuDNN call into Error(kDevice) naming the call.
void check_cudnn(cudnnStatus_t status, const char* what);

class CudnnContext {
 public:
  // Throws Error(kDevice) where cuDNN cannot start (no GPU or no library).
  explicit CudnnContext(cudaStream_t stream = nullptr);
  ~CudnnContext();
  CudnnContext(const CudnnContext&) = delete;
  CudnnContext& operator=(const CudnnContext&) = delete;

  cudnnHandle_t handle() const { return handle_; }
  cudaStream_t stream() const { return stream_; }

  // Makes the workspace at least `bytes` large. Reallocation synchronises
  // the device: call it when kernels are made, not between their runs.
  void reserve(std::size_t bytes);
  void* workspace() const { return workspace_; }
  std::size_t workspace_size() const { return size_; }

  // A scratch array of at least `bytes` for operations between kernels
  // (per-channel values rounded to bf16 or fp16), apart from the workspace.
  // Grown on the first calls to the largest size asked; growth synchronises the
  // device, so a layer's steady state allocates nothing.
  void* scratch(std::size_t bytes) const;

 private:
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t size_ = 0;
  mutable void* scratch_ = nullptr;
  mutable std::size_t scratch_size_ = 0;
};

// The cuDNN context `exec` and its copies share, made on the first call
// (Error(kDevice) where cuDNN cannot start; the next call tries again).
CudnnContext& cudnn_context(const Exec<DeviceSpace>& exec);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDNN_CUDNN_CONTEXT_H_
