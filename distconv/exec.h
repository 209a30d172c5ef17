// Exec<Space>: the execution context of a memory space, the one thing a
// space's primitives (kernels/space_ops.h: zero, copy, sum on strided
// views) and the layers' work need to know where and how work runs.
//
//   Exec<HostSpace>: work runs at once, on the calling thread.
//   Exec<DeviceSpace>: work is queued on a CUDA stream the caller owns
//     (a framework's), which must outlive the context; the context owns
//     nothing. This header includes no CUDA header (a cudaStream_t is a
//     CUstream_st*), so it compiles in every build.
//
//   const Exec<HostSpace> host;
//   zero(host, shard.interior());          // kernels/space_ops.h
//   const Exec<DeviceSpace> gpu(stream);
//   zero(gpu, device_shard.interior());    // kernels/cuda/space_ops.h
#ifndef DISTCONV_EXEC_H_
#define DISTCONV_EXEC_H_

#include <type_traits>

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
  // nullptr is CUDA's default stream.
  explicit Exec(CUstream_st* stream) : stream_(stream) {}
  CUstream_st* stream() const { return stream_; }

 private:
  CUstream_st* stream_;
};

namespace internal {

// The context of a layer whose options name a stream (their `stream`
// field: the GPU's; the host has none to take, and ignores it).
template <typename Space>
Exec<Space> exec_on(CUstream_st* stream) {
  if constexpr (std::is_same_v<Space, HostSpace>) {
    (void)stream;
    return Exec<HostSpace>();
  } else {
    return Exec<Space>(stream);
  }
}

}  // namespace internal
}  // namespace distconv

#endif  // DISTCONV_EXEC_H_
