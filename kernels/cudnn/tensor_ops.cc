#include "kernels/cudnn/tensor_ops.h"

#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/halo_layout.h"
#include "kernels/cuda/narrow_kernels.h"
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

template <typename T, typename V>
cudnn::TensorDesc view_desc(const V& v) {
  cudnn::TensorDesc d;
  d.set(cudnn::data_type<T>(), v.extent(), v.strides());
  return d;
}

// The per-channel values as cuDNN reads them with views of T: themselves,
// or rounded to T (bf16, fp16) in the context's scratch (on its stream).
template <typename T>
const T* per_channel_values(const CudnnContext& context, const Compute<T>* v,
                            Index channels) {
  if constexpr (kNarrow<T>) {
    T* narrow = static_cast<T*>(context.scratch(sizeof(T) * channels));
    launch_narrow(v, narrow, channels, context.stream());
    return narrow;
  } else {
    return v;
  }
}

}  // namespace

template <typename T>
void cudnn_fill_bias(const CudnnContext& context,
                     const StridedView<T, DeviceSpace>& v,
                     const Compute<T>* bias) {
  if (v.size() == 0) return;
  const cudnn::TensorDesc d = view_desc<T>(v);
  const T zero = T(0);  // cudnnSetTensor reads a value of the tensor's type
  const cudnn::Scale<T> one = 1;
  check_cudnn(cudnnSetTensor(context.handle(), d.get(), v.data(), &zero),
              "cudnnSetTensor");
  if (bias == nullptr) return;
  const cudnn::TensorDesc b = per_channel_desc(v, cudnn::data_type<T>());
  check_cudnn(
      cudnnAddTensor(context.handle(), &one, b.get(),
                     per_channel_values<T>(context, bias, v.extent()[1]), &one,
                     d.get(), v.data()),
      "cudnnAddTensor of the bias");
}

template <typename T>
void cudnn_add_per_channel(const CudnnContext& context,
                           const StridedView<T, DeviceSpace>& v,
                           const Compute<T>* values) {
  if (v.size() == 0) return;
  const cudnn::TensorDesc d = view_desc<T>(v);
  const cudnn::TensorDesc b = per_channel_desc(v, cudnn::data_type<T>());
  const cudnn::Scale<T> one = 1;
  check_cudnn(
      cudnnAddTensor(context.handle(), &one, b.get(),
                     per_channel_values<T>(context, values, v.extent()[1]),
                     &one, d.get(), v.data()),
      "cudnnAddTensor of per-channel values");
}

template <typename T>
void cudnn_sum_per_channel(const CudnnContext& context,
                           const StridedView<const T, DeviceSpace>& v,
                           Compute<T>* sums) {
  if (v.size() == 0) return;
  const cudnn::TensorDesc d = view_desc<T>(v);
  const cudnn::TensorDesc s = per_channel_desc(v, cudnn::data_type<T>());
  const cudnn::Scale<T> zero = 0, one = 1;
  if constexpr (kNarrow<T>) {  // summed in fp32, rounded once, then added
    const Index channels = v.extent()[1];
    T* narrow = static_cast<T*>(context.scratch(sizeof(T) * channels));
    check_cudnn(cudnnConvolutionBackwardBias(context.handle(), &one, d.get(),
                                             v.data(), &zero, s.get(), narrow),
                "cudnnConvolutionBackwardBias");
    launch_add_widened(narrow, sums, channels, context.stream());
  } else {
    check_cudnn(cudnnConvolutionBackwardBias(context.handle(), &one, d.get(),
                                             v.data(), &one, s.get(), sums),
                "cudnnConvolutionBackwardBias");
  }
}

#define DISTCONV_CUDNN_TENSOR_OPS(T)                                      \
  template void cudnn_fill_bias(const CudnnContext&,                      \
                                const StridedView<T, DeviceSpace>&,       \
                                const Compute<T>*);                       \
  template void cudnn_add_per_channel(const CudnnContext&,                \
                                      const StridedView<T, DeviceSpace>&, \
                                      const Compute<T>*);                 \
  template void cudnn_sum_per_channel(                                    \
      const CudnnContext&, const StridedView<const T, DeviceSpace>&,      \
      Compute<T>*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_CUDNN_TENSOR_OPS)
#undef DISTCONV_CUDNN_TENSOR_OPS

}  // namespace distconv
