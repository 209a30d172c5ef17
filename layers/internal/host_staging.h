// Internal: moving a layer's arrays between a memory space and the host,
// on the space's execution context, for the layers whose collectives or
// per-channel arithmetic run on the host (batch normalisation's
// parameters, redistribution's messages, the GPU's channel collectives).
//
//   const float* s = host_values(exec, scale, n, copy, "scale");
//   store_host_values(exec, diff_scale_on_host, diff_scale, "gradients");
//
// Host memory: the array itself; a plain copy. GPU memory: a copy in
// `copy` once the work queued on the context's stream is done; the store
// queued on that stream, returning once `from` is staged (so `from` may
// change) but before it has landed. The GPU's byte copies and wait below
// are defined in layers/internal/device_staging.cc (built only with
// --config=cuda); a failure throws Error(kDevice) naming `what`.
#ifndef DISTCONV_LAYERS_INTERNAL_HOST_STAGING_H_
#define DISTCONV_LAYERS_INTERNAL_HOST_STAGING_H_

#include <algorithm>
#include <cstddef>
#include <vector>

#include "distconv/exec.h"
#include "distconv/shape.h"

namespace distconv::internal {

// GPU memory: `bytes` of `device` into `host` after the work queued on the
// context's stream, waiting for them (and for that work).
void stage_to_host(const Exec<DeviceSpace>& exec, void* host,
                   const void* device, std::size_t bytes, const char* what);
// GPU memory: `bytes` of `host` into `device`, queued on the stream;
// returns once they are staged, before they have landed.
void stage_to_device(const Exec<DeviceSpace>& exec, void* device,
                     const void* host, std::size_t bytes, const char* what);
// GPU memory: waits for the work queued on the context's stream; `what`
// names the wait.
void wait_for(const Exec<DeviceSpace>& exec, const char* what);

template <typename P>
const P* host_values(const Exec<HostSpace>&, const P* p, Index, std::vector<P>&,
                     const char*) {
  return p;
}
template <typename P>
const P* host_values(const Exec<DeviceSpace>& exec, const P* p, Index n,
                     std::vector<P>& copy, const char* what) {
  copy.resize(static_cast<std::size_t>(n));
  stage_to_host(exec, copy.data(), p, sizeof(P) * copy.size(), what);
  return copy.data();
}

template <typename P>
void store_host_values(const Exec<HostSpace>&, const std::vector<P>& from,
                       P* to, const char*) {
  std::copy(from.begin(), from.end(), to);
}
template <typename P>
void store_host_values(const Exec<DeviceSpace>& exec,
                       const std::vector<P>& from, P* to, const char* what) {
  stage_to_device(exec, to, from.data(), sizeof(P) * from.size(), what);
}

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_HOST_STAGING_H_
