// Exec<Space>: the execution context of a memory space, the one thing a
// space's primitives (kernels/space_ops.h: zero, copy, sum on strided
// views) and the layers' work need to know where and how work runs.
//
//   Exec<HostSpace>: work runs at once, on the calling thread.
//   Exec<DeviceSpace>: work is queued on a CUDA stream the caller owns
//     (a framework's), which must outlive the context and every layer
//     made with it. Made without a stream, it names CUDA's legacy default
//     stream. The context and its copies share the resources the GPU's
//     libraries attach to it on first use: the cuDNN handle bound to the
//     stream, with one workspace grown to the largest any kernel made on
//     it needs (kernels/cudnn/cudnn_context.h, cudnn_context()). Layers
//     made with copies of one context therefore share one handle and one
//     workspace; made with contexts of their own (the default argument),
//     each has its own. The context is not thread-safe: its layers run one
//     after another on its stream, from one thread. This header includes
//     no CUDA header (a cudaStream_t is a CUstream_st*), so it compiles in
//     every build.
//
// Every layer takes its space's context as its last argument (a copy is
// kept; the default is the host's, or the GPU's legacy default stream):
//
//   const Exec<HostSpace> host;
//   zero(host, shard.interior());          // kernels/space_ops.h
//   const Exec<DeviceSpace> gpu(stream);
//   zero(gpu, device_shard.interior());    // kernels/cuda/space_ops.h
//   Activation<float, DeviceSpace> relu(grid, desc, dist, gpu);
#ifndef DISTCONV_EXEC_H_
#define DISTCONV_EXEC_H_

#include <memory>

#include "distconv/memory_space.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

struct DeviceSpace;  // distconv/device_space.h (GPU builds)

namespace internal {

// What the GPU's libraries attach to a device context and its copies,
// made on first use by the library that needs it (its type known there
// alone): kernels/cudnn/cudnn_context.cc keeps the cuDNN context here.
struct DeviceResources {
  std::shared_ptr<void> cudnn;
};

}  // namespace internal

template <typename Space>
class Exec;

template <>
class Exec<HostSpace> {
 public:
  Exec() = default;
};

template <>
class Exec<DeviceSpace> {
 public:
  // CUDA's legacy default stream.
  Exec() = default;
  // nullptr is the legacy default stream too.
  explicit Exec(CUstream_st* stream) : stream_(stream) {}
  CUstream_st* stream() const { return stream_; }
  // The resources shared by this context and its copies (internal).
  internal::DeviceResources& resources() const { return *resources_; }

 private:
  CUstream_st* stream_ = nullptr;
  std::shared_ptr<internal::DeviceResources> resources_ =
      std::make_shared<internal::DeviceResources>();
};

}  // namespace distconv

#endif  // DISTCONV_EXEC_H_
