#include "kernels/cuda/elementwise_kernels.h"

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
void launch_add(const PointwiseDims<3>& dims, T* dst, const T* a, const T* b,
                CUstream_st* stream) {
  launch_pointwise(dims, Sum<T>{}, stream, "add", dst, a, b);
}

template <typename T>
void launch_copy(const PointwiseDims<2>& dims, T* dst, const T* src,
                 CUstream_st* stream) {
  launch_pointwise(dims, Same<T>{}, stream, "copy", dst, src);
}

template <typename T>
void launch_zero(const PointwiseDims<1>& dims, T* dst, CUstream_st* stream) {
  launch_pointwise(dims, Zero<T>{}, stream, "zero", dst);
}

template void launch_add<float>(const PointwiseDims<3>&, float*, const float*,
                                const float*, CUstream_st*);
template void launch_add<double>(const PointwiseDims<3>&, double*,
                                 const double*, const double*, CUstream_st*);
template void launch_copy<float>(const PointwiseDims<2>&, float*,
                                 const float*, CUstream_st*);
template void launch_copy<double>(const PointwiseDims<2>&, double*,
                                  const double*, CUstream_st*);
template void launch_zero<float>(const PointwiseDims<1>&, float*,
                                 CUstream_st*);
template void launch_add<bf16>(const PointwiseDims<3>&, bf16*, const bf16*,
                               const bf16*, CUstream_st*);
template void launch_copy<bf16>(const PointwiseDims<2>&, bf16*, const bf16*,
                                CUstream_st*);
template void launch_zero<bf16>(const PointwiseDims<1>&, bf16*, CUstream_st*);
template void launch_add<fp16>(const PointwiseDims<3>&, fp16*, const fp16*,
                               const fp16*, CUstream_st*);
template void launch_copy<fp16>(const PointwiseDims<2>&, fp16*, const fp16*,
                                CUstream_st*);
template void launch_zero<fp16>(const PointwiseDims<1>&, fp16*, CUstream_st*);
template void launch_zero<double>(const PointwiseDims<1>&, double*,
                                  CUstream_st*);

}  // namespace distconv
