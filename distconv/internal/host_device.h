// DISTCONV_HOST_DEVICE marks a function compiled for both the host and the
// GPU: __host__ __device__ under nvcc, nothing elsewhere. Index math shared
// by the CUDA kernels and their host tests uses it, so the very code the
// kernels run is tested in every build.
#ifndef DISTCONV_INTERNAL_HOST_DEVICE_H_
#define DISTCONV_INTERNAL_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define DISTCONV_HOST_DEVICE __host__ __device__
#else
#define DISTCONV_HOST_DEVICE
#endif

#endif  // DISTCONV_INTERNAL_HOST_DEVICE_H_
