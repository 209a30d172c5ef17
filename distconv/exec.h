// Exec<Space>: the execution context of a memory space, the one thing a
// space's primitives (kernels/space_ops.h: zero, copy, sum on strided
// views) and the layers' work need to know where and how work runs.
//
//   Exec<HostSpace>: work runs at once, on the calling thread.
//   Exec<DeviceSpace>: work is queued on a CUDA stream the caller owns
//     (a framework's), which must outlive the context and every layer
//     made with it; the context owns nothing. Made without a stream, it
//     names CUDA's legacy default stream. This header includes no CUDA
//     header (a cudaStream_t is a CUstream_st*), so it compiles in every
//     build.
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

#include "distconv/memory_space.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

struct DeviceSpace;  // distconv/device_space.h (GPU builds)

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

 private:
  CUstream_st* stream_ = nullptr;
};

}  // namespace distconv

#endif  // DISTCONV_EXEC_H_
