#include "kernels/cudnn/tensor_ops.h"

#include "distconv/halo_layout.h"
#include "kernels/cudnn/cudnn_descriptors.h"

namespace distconv {
namespace {

// (1, C, 1...): one value per channel of `v`.
template <typename V>
cudnn::TensorDesc per_channel_desc(const V& v, cudnnDataType_t type) {
  Shape extent = Shape::filled(v.ndims(), 1);
  extent[1] = v.extent()[1];
  cudnn::TensorDesc d;
  d.set(type, extent, dense_strides(extent, StorageOrder::kChannelsFirst));
  return d;
}

}  // namespace

template <typename T>
void cudnn_fill_bias(const CudnnContext& context,
                     const StridedView<T, DeviceSpace>& v, const T* bias) {
  if (v.size() == 0) return;
  const cudnnDataType_t type = cudnn::data_type<T>();
  cudnn::TensorDesc d;
  d.set(type, v.extent(), v.strides());
  const T zero = 0, one = 1;
  check_cudnn(cudnnSetTensor(context.handle(), d.get(), v.data(), &zero),
              "cudnnSetTensor");
  if (bias == nullptr) return;
  const cudnn::TensorDesc b = per_channel_desc(v, type);
  check_cudnn(cudnnAddTensor(context.handle(), &one, b.get(), bias, &one,
                             d.get(), v.data()),
              "cudnnAddTensor of the bias");
}

template <typename T>
void cudnn_add_per_channel(const CudnnContext& context,
                           const StridedView<T, DeviceSpace>& v,
                           const T* values) {
  if (v.size() == 0) return;
  const cudnnDataType_t type = cudnn::data_type<T>();
  cudnn::TensorDesc d;
  d.set(type, v.extent(), v.strides());
  const cudnn::TensorDesc b = per_channel_desc(v, type);
  const T one = 1;
  check_cudnn(cudnnAddTensor(context.handle(), &one, b.get(), values, &one,
                             d.get(), v.data()),
              "cudnnAddTensor of per-channel values");
}

template <typename T>
void cudnn_sum_per_channel(const CudnnContext& context,
                           const StridedView<const T, DeviceSpace>& v,
                           T* sums) {
  if (v.size() == 0) return;
  const cudnnDataType_t type = cudnn::data_type<T>();
  cudnn::TensorDesc d;
  d.set(type, v.extent(), v.strides());
  const cudnn::TensorDesc s = per_channel_desc(v, type);
  const T one = 1;
  check_cudnn(cudnnConvolutionBackwardBias(context.handle(), &one, d.get(),
                                           v.data(), &one, s.get(), sums),
              "cudnnConvolutionBackwardBias");
}

template <typename T>
void cudnn_copy(const CudnnContext& context,
                const StridedView<const T, DeviceSpace>& from,
                const StridedView<T, DeviceSpace>& to) {
  if (to.size() == 0) return;
  const cudnnDataType_t type = cudnn::data_type<T>();
  cudnn::TensorDesc f, t;
  f.set(type, from.extent(), from.strides());
  t.set(type, to.extent(), to.strides());
  const T zero = 0, one = 1;
  check_cudnn(cudnnTransformTensor(context.handle(), &one, f.get(),
                                   from.data(), &zero, t.get(), to.data()),
              "cudnnTransformTensor");
}

template void cudnn_copy(const CudnnContext&,
                         const StridedView<const float, DeviceSpace>&,
                         const StridedView<float, DeviceSpace>&);
template void cudnn_copy(const CudnnContext&,
                         const StridedView<const double, DeviceSpace>&,
                         const StridedView<double, DeviceSpace>&);
template void cudnn_fill_bias(const CudnnContext&,
                              const StridedView<float, DeviceSpace>&,
                              const float*);
template void cudnn_fill_bias(const CudnnContext&,
                              const StridedView<double, DeviceSpace>&,
                              const double*);
template void cudnn_add_per_channel(const CudnnContext&,
                                    const StridedView<float, DeviceSpace>&,
                                    const float*);
template void cudnn_add_per_channel(const CudnnContext&,
                                    const StridedView<double, DeviceSpace>&,
                                    const double*);
template void cudnn_sum_per_channel(
    const CudnnContext&, const StridedView<const float, DeviceSpace>&, float*);
template void cudnn_sum_per_channel(
    const CudnnContext&, const StridedView<const double, DeviceSpace>&,
    double*);

}  // namespace distconv
