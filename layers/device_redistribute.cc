// Redistribution in GPU memory (Redistribution<T, DeviceSpace>): the host
// layer's plan and messages (layers/internal/redistribute_impl.h), boxes
// packed and unpacked by the element-wise CUDA copies, messages staged
// through the host on the options' stream. Built only with --config=cuda.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/space_ops.h"
#include "layers/internal/device_staging.h"
#include "layers/internal/redistribute_impl.h"
#include "layers/redistribute.h"

namespace distconv {
namespace internal {

template <>
struct RedistributionStaging<DeviceSpace> {
  static void to_host(CUstream_st* stream, void* host, const void* device,
                      std::size_t bytes) {
    stage_to_host(stream, host, device, bytes, "redistribution");
  }
  static void to_device(CUstream_st* stream, void* device, const void* host,
                        std::size_t bytes) {
    stage_to_device(stream, device, host, bytes, "redistribution");
    check_cuda(cudaStreamSynchronize(stream),
               "redistribution: waiting for the received messages");
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Redistribution<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
