// Internal: owning wrappers of cuDNN's tensor, filter and convolution
// descriptors, set from the library's Shapes (extents in logical order
// N, C, spatial...; element strides in any storage order).
#ifndef DISTCONV_KERNELS_CUDNN_CUDNN_DESCRIPTORS_H_
#define DISTCONV_KERNELS_CUDNN_CUDNN_DESCRIPTORS_H_

#include <cudnn.h>

#include <type_traits>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/shape.h"
#include "kernels/cudnn/cudnn_context.h"

namespace distconv::cudnn {

// The entries as cuDNN's ints; throws kUnsupported past INT_MAX.
std::vector<int> ints(const Shape& s);

// cuDNN's type of elements of T (float, double, bf16, fp16).
template <typename T>
cudnnDataType_t data_type();

// What cuDNN accumulates elements of T in, and the type of the scaling
// factors (alpha, beta) it takes with them: double for double, else float.
template <typename T>
cudnnDataType_t compute_type() {
  return std::is_same_v<T, double> ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}
template <typename T>
using Scale = std::conditional_t<std::is_same_v<T, double>, double, float>;

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
