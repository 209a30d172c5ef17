// Internal: copies between device memory and pageable host memory on a
// stream, for the layers in GPU memory whose collectives run on the host
// (channel collectives; on an execution context, redistribution and batch
// normalisation's parameters: layers/internal/host_staging.h, whose GPU
// functions are defined here). Built only with --config=cuda.
#ifndef DISTCONV_LAYERS_INTERNAL_DEVICE_STAGING_H_
#define DISTCONV_LAYERS_INTERNAL_DEVICE_STAGING_H_

#include <cuda_runtime_api.h>

#include <cstddef>

namespace distconv::internal {

// `bytes` of `device` into `host` after the work queued on `stream`, and
// waits for them (and for that work). Errors name `what`.
void stage_to_host(cudaStream_t stream, void* host, const void* device,
                   std::size_t bytes, const char* what);

// Queues `bytes` of `host` into `device` on `stream`. Returns once they
// are staged (a copy from pageable memory), so `host` may change, but
// before they have landed.
void stage_to_device(cudaStream_t stream, void* device, const void* host,
                     std::size_t bytes, const char* what);

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_DEVICE_STAGING_H_
