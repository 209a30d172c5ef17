// Internal (GPU builds): turns a failed CUDA runtime call into
// Error(kDevice) naming the call and CUDA's own message.
//
//   check_cuda(cudaMalloc(&p, bytes), "cudaMalloc of ", bytes, " bytes");
#ifndef DISTCONV_INTERNAL_CUDA_CHECK_H_
#define DISTCONV_INTERNAL_CUDA_CHECK_H_

#include <cuda_runtime_api.h>

#include "distconv/error.h"

namespace distconv::internal {

template <typename... Parts>
void check_cuda(cudaError_t code, const Parts&... what) {
  if (code == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls may work
  throw Error(ErrorKind::kDevice,
              str(what..., " failed: ", cudaGetErrorString(code)));
}

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_CUDA_CHECK_H_
