// Internal: owning wrappers of cuDNN's tensor, filter and convolution
// descriptors, set from the library's Shapes (extents in logical order
// N, C, spatial...; element strides in any storage order).
#ifndef DISTCONV_KERNELS_CUDNN_CUDNN_DESCRIPTORS_H_
#define DISTCONV_KERNELS_CUDNN_CUDNN_DESCRIPTORS_H_

#include <cudnn.h>

#include <vector>

#include "distconv/shape.h"
#include "kernels/cudnn/cudnn_context.h"

namespace distconv::cudnn {

// The entries as cuDNN's ints; throws kUnsupported past INT_MAX.
std::vector<int> ints(const Shape& s);

template <typename T>
cudnnDataType_t data_type();

class TensorDesc {
 public:
  TensorDesc();
  ~TensorDesc();
  TensorDesc(TensorDesc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  TensorDesc& operator=(TensorDesc&&) = delete;
  void set(cudnnDataType_t type, const Shape& extent, const Shape& strides);
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

class FilterDesc {
 public:
  FilterDesc();
  ~FilterDesc();
  FilterDesc(FilterDesc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  FilterDesc& operator=(FilterDesc&&) = delete;
  // extent: (F, C / groups, k...).
  void set(cudnnDataType_t type, const Shape& extent, bool channels_last);
  cudnnFilterDescriptor_t get() const { return d_; }

 private:
  cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvolutionDesc {
 public:
  ConvolutionDesc();
  ~ConvolutionDesc();
  ConvolutionDesc(ConvolutionDesc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  ConvolutionDesc& operator=(ConvolutionDesc&&) = delete;
  void set(cudnnDataType_t compute, const Shape& padding, const Shape& stride,
           const Shape& dilation, Index groups);
  cudnnConvolutionDescriptor_t get() const { return d_; }

 private:
  cudnnConvolutionDescriptor_t d_ = nullptr;
};

}  // namespace distconv::cudnn

#endif  // DISTCONV_KERNELS_CUDNN_CUDNN_DESCRIPTORS_H_
