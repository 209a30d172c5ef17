// Internal: a layer's small per-channel arrays (its parameters and their
// gradients) in a memory space, read and written from the host, where the
// layer computes with them (batch normalisation's scale and shift).
//
//   const float* s = host_values(exec, scale, n, copy, "scale");
//   store_host_values(exec, diff_scale_on_host, diff_scale, "gradients");
//
// Host memory: the array itself; a plain copy. GPU memory
// (layers/internal/device_staging.cc, built only with --config=cuda): a
// copy in `copy` once the work queued on the context's stream is done;
// the store queued on that stream, returning once `from` is staged (so
// `from` may change) but before it has landed; a failure throws
// Error(kDevice) naming `what`. Defined for the compute types (float,
// double).
#ifndef DISTCONV_LAYERS_INTERNAL_HOST_VALUES_H_
#define DISTCONV_LAYERS_INTERNAL_HOST_VALUES_H_

#include <algorithm>
#include <vector>

#include "distconv/exec.h"
#include "distconv/shape.h"

namespace distconv::internal {

template <typename P>
const P* host_values(const Exec<HostSpace>&, const P* p, Index, std::vector<P>&,
                     const char*) {
  return p;
}

template <typename P>
void store_host_values(const Exec<HostSpace>&, const std::vector<P>& from,
                       P* to, const char*) {
  std::copy(from.begin(), from.end(), to);
}

template <typename P>
const P* host_values(const Exec<DeviceSpace>& exec, const P* p, Index n,
                     std::vector<P>& copy, const char* what);

template <typename P>
void store_host_values(const Exec<DeviceSpace>& exec,
                       const std::vector<P>& from, P* to, const char* what);

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_HOST_VALUES_H_
