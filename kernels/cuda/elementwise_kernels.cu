#include "kernels/cuda/elementwise_kernels.h"

#include "distconv/element_types.h"
#include "kernels/cuda/pointwise_kernel.h"

namespace distconv {
namespace {

template <typename T>
struct Sum {
  __device__ T operator()(T a, T b) const { return a + b; }
};

template <typename T>
struct Same {
  __device__ T operator()(T a) const { return a; }
};

template <typename T>
struct Zero {
  __device__ T operator()() const { return T(0); }
};

}  // namespace

using internal::launch_pointwise;

template <typename T>
void launch_add(const internal::PointwiseDims<3>& dims, T* dst, const T* a,
                const T* b, CUstream_st* stream) {
  launch_pointwise(dims, Sum<T>{}, stream, "add", dst, a, b);
}

template <typename T>
void launch_copy(const internal::PointwiseDims<2>& dims, T* dst, const T* src,
                 CUstream_st* stream) {
  launch_pointwise(dims, Same<T>{}, stream, "copy", dst, src);
}

template <typename T>
void launch_zero(const internal::PointwiseDims<1>& dims, T* dst,
                 CUstream_st* stream) {
  launch_pointwise(dims, Zero<T>{}, stream, "zero", dst);
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template void launch_add<T>(const internal::PointwiseDims<3>&, T*, const T*, \
                              const T*, CUstream_st*);                         \
  template void launch_copy<T>(const internal::PointwiseDims<2>&, T*,          \
                               const T*, CUstream_st*);                        \
  template void launch_zero<T>(const internal::PointwiseDims<1>&, T*,          \
                               CUstream_st*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
