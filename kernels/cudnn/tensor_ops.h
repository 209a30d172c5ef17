// Per-channel operations on strided views of GPU memory through cuDNN, for
// the cells of a layer that no convolution kernel writes. Queued on the
// context's stream; views with a zero extent are left alone. Built only
// with --config=cuda. Defined for every element type of
// distconv/element_types.h; per-channel values are Compute<T> (fp32 for 16-bit
// views: rounded to T in the context's scratch before cuDNN adds them, and
// 16-bit sums rounded once before they are added to fp32 ones).
//
// The GPU's per-channel primitives of kernels/space_ops.h,
// fill_per_channel, add_per_channel and sum_per_channel on an
// Exec<DeviceSpace>, run these on the context's cuDNN handle
// (cudnn_context()).
#ifndef DISTCONV_KERNELS_CUDNN_TENSOR_OPS_H_
#define DISTCONV_KERNELS_CUDNN_TENSOR_OPS_H_

#include "distconv/bf16.h"
#include "distconv/device_space.h"
#include "distconv/exec.h"
#include "distconv/strided_view.h"
#include "kernels/cudnn/cudnn_context.h"

namespace distconv {

// v(n, c, ...) = bias[c] in every cell; 0 where bias is null.
template <typename T>
void cudnn_fill_bias(const CudnnContext& context,
                     const StridedView<T, DeviceSpace>& v,
                     const Compute<T>* bias);

// v(n, c, ...) += values[c] in every cell (a bias added after the fact).
template <typename T>
void cudnn_add_per_channel(const CudnnContext& context,
                           const StridedView<T, DeviceSpace>& v,
                           const Compute<T>* values);

// sums[c] += the sum of v(n, c, ...) over every cell (a bias gradient).
template <typename T>
void cudnn_sum_per_channel(const CudnnContext& context,
                           const StridedView<const T, DeviceSpace>& v,
                           Compute<T>* sums);

template <typename T>
void fill_per_channel(const Exec<DeviceSpace>& exec,
                      const StridedView<T, DeviceSpace>& dst,
                      const Compute<T>* values) {
  cudnn_fill_bias(cudnn_context(exec), dst, values);
}
template <typename T>
void add_per_channel(const Exec<DeviceSpace>& exec,
                     const StridedView<T, DeviceSpace>& dst,
                     const Compute<T>* values) {
  cudnn_add_per_channel(cudnn_context(exec), dst, values);
}
template <typename T>
void sum_per_channel(const Exec<DeviceSpace>& exec,
                     const StridedView<const T, DeviceSpace>& src,
                     Compute<T>* sums) {
  cudnn_sum_per_channel(cudnn_context(exec), src, sums);
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDNN_TENSOR_OPS_H_
