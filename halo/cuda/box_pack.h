// DeviceBoxCopy<T>: the GPU halo exchange's pack kernels. Packs boxes of a
// row-major device array (a tensor's local buffer in storage order) into one
// contiguous device buffer, and unpacks such a buffer back into the boxes:
// copying, or accumulating (sum or max) for the reverse exchange.
//
//   DeviceBoxCopy<float> sends(storage_shape, send_boxes);  // uploads once
//   sends.pack(buffer, packed, stream);                     // async
//   ...
//   recvs.unpack(packed, buffer, BoxCombine::kSum, stream);
//
// The index math is box_segments.h's (tested on the host). Kernels read and
// write in 16-byte units where every offset and both pointers allow it, and
// one element at a time otherwise. pack() runs every box in one launch;
// unpack() one launch per wave of disjoint boxes, so accumulation adds a
// cell's contributions in the boxes' order, deterministically, and gives
// what internal::combine_box gives on the host bit for bit (sum and max of
// fp16/bf16 are computed in fp32, of fp64 in fp64).
//
// All calls are asynchronous on `stream`; the pointers must stay valid until
// the stream has run them. Defined for float, double, __half,
// __nv_bfloat16 and distconv's bf16 and fp16 (combined as __nv_bfloat16
// and __half). Built
// only with --config=cuda.
#ifndef DISTCONV_HALO_CUDA_BOX_PACK_H_
#define DISTCONV_HALO_CUDA_BOX_PACK_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/box.h"
#include "distconv/shape.h"
#include "halo/cuda/box_segments.h"

namespace distconv {

enum class BoxCombine { kCopy, kSum, kMax };

template <typename T>
class DeviceBoxCopy {
 public:
  // `boxes` lie in a row-major array of extent `extent`; their cells are
  // packed one box after the other. Throws Error(kDevice) if the segments
  // cannot be uploaded, kUnsupported for more than 65535 boxes.
  DeviceBoxCopy(const Shape& extent, const std::vector<Box>& boxes);
  ~DeviceBoxCopy();
  DeviceBoxCopy(DeviceBoxCopy&& other) noexcept;
  DeviceBoxCopy& operator=(DeviceBoxCopy&& other) noexcept;
  DeviceBoxCopy(const DeviceBoxCopy&) = delete;
  DeviceBoxCopy& operator=(const DeviceBoxCopy&) = delete;

  // Elements in the packed buffer.
  std::int64_t packed_volume() const { return scalar_.host.packed_volume; }
  // Elements per load and store when both pointers are 16-byte aligned.
  int width() const { return vector_.host.width; }

  // packed[...] = the boxes' cells of `array`.
  void pack(const T* array, T* packed, cudaStream_t stream) const;
  // The boxes' cells of `array` = packed (kCopy), or combined with it.
  void unpack(const T* packed, T* array, BoxCombine combine,
              cudaStream_t stream) const;

 private:
  struct Plan {
    BoxSegments host;
    BoxSegment* device = nullptr;  // host.segments, uploaded
  };
  const Plan& plan_for(const void* a, const void* b) const;
  static void upload(Plan& plan);
  static void release(Plan& plan) noexcept;

  Plan vector_, scalar_;
};

}  // namespace distconv

#endif  // DISTCONV_HALO_CUDA_BOX_PACK_H_
