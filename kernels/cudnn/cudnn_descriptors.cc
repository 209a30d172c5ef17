#include "kernels/cudnn/cudnn_descriptors.h"

#include <climits>

#include "distconv/error.h"

namespace distconv::cudnn {

std::vector<int> ints(const Shape& s) {
  std::vector<int> out;
  for (int d = 0; d < s.ndims(); ++d) {
    require(s[d] <= INT_MAX, ErrorKind::kUnsupported,
            "cuDNN takes int sizes: ", s, " has an entry past ", INT_MAX);
    out.push_back(static_cast<int>(s[d]));
  }
  return out;
}

template <>
cudnnDataType_t data_type<float>() {
  return CUDNN_DATA_FLOAT;
}
template <>
cudnnDataType_t data_type<double>() {
  return CUDNN_DATA_DOUBLE;
}
template <>
cudnnDataType_t data_type<bf16>() {
  return CUDNN_DATA_BFLOAT16;
}
template <>
cudnnDataType_t data_type<fp16>() {
  return CUDNN_DATA_HALF;
}

TensorDesc::TensorDesc() {
  check_cudnn(cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor");
}
TensorDesc::~TensorDesc() {
  if (d_ != nullptr) cudnnDestroyTensorDescriptor(d_);
}
void TensorDesc::set(cudnnDataType_t type, const Shape& extent,
                     const Shape& strides) {
  const std::vector<int> e = ints(extent), s = ints(strides);
  check_cudnn(
      cudnnSetTensorNdDescriptor(d_, type, extent.ndims(), e.data(), s.data()),
      "cudnnSetTensorNdDescriptor");
}

FilterDesc::FilterDesc() {
  check_cudnn(cudnnCreateFilterDescriptor(&d_), "cudnnCreateFilterDescriptor");
}
FilterDesc::~FilterDesc() {
  if (d_ != nullptr) cudnnDestroyFilterDescriptor(d_);
}
void FilterDesc::set(cudnnDataType_t type, const Shape& extent,
                     bool channels_last) {
  const std::vector<int> e = ints(extent);
  check_cudnn(
      cudnnSetFilterNdDescriptor(
          d_, type, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
          extent.ndims(), e.data()),
      "cudnnSetFilterNdDescriptor");
}

ConvolutionDesc::ConvolutionDesc() {
  check_cudnn(cudnnCreateConvolutionDescriptor(&d_),
              "cudnnCreateConvolutionDescriptor");
}
ConvolutionDesc::~ConvolutionDesc() {
  if (d_ != nullptr) cudnnDestroyConvolutionDescriptor(d_);
}
void ConvolutionDesc::set(cudnnDataType_t compute, const Shape& padding,
                          const Shape& stride, const Shape& dilation,
                          Index groups) {
  const std::vector<int> p = ints(padding), s = ints(stride),
                         d = ints(dilation);
  check_cudnn(cudnnSetConvolutionNdDescriptor(d_, padding.ndims(), p.data(),
                                              s.data(), d.data(),
                                              CUDNN_CROSS_CORRELATION, compute),
              "cudnnSetConvolutionNdDescriptor");
  check_cudnn(cudnnSetConvolutionGroupCount(d_, static_cast<int>(groups)),
              "cudnnSetConvolutionGroupCount");
}

}  // namespace distconv::cudnn
