// oneDNN convolution kernels (CPU, fp32): forward, backward-data and
// backward-weights with bias, planned once (primitive descriptors,
// primitives, weight reorders) and executed many times on dense
// channels-last arrays (N, [D,] H, W, C), the layout oneDNN's AVX-512
// kernels are fastest with. Weights and biases are plain: (F, C / g, k...)
// and (F).
//
// Backward-weights with 64 or more channels per group copies src and
// diff_dst into oneDNN's 16-channel blocked layout first (buffers of the
// plan, as large as the two arrays), where its kernel is faster by more
// than the copies cost (see conv.cc). Backward-data with stride 1 and 8 or
// more output channels per group runs as the adjoint forward convolution
// (weights transposed and flipped into a buffer of the plan, mirrored
// padding), whose oneDNN kernel is faster than the backward-data one.
//
// Local problems come from ConvGeometry windows: padding may be asymmetric
// and differ from the global description's.
//
//   ConvDesc local = ...;                       // window's padding
//   onednn::Conv conv(local, {1, 16, 34, 64}, {1, 16, 32, 64},
//                     ConvPass::kForward);
//   conv.forward(src, weights, bias, dst);      // channels-last arrays
#ifndef DISTCONV_KERNELS_ONEDNN_CONV_H_
#define DISTCONV_KERNELS_ONEDNN_CONV_H_

#include <memory>
#include <string>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "kernels/conv_pass.h"

namespace distconv::onednn {

class Conv {
 public:
  // Throws distconv::Error (kUnsupported) if oneDNN cannot do it.
  Conv(const ConvDesc& desc, const Shape& src_shape, const Shape& dst_shape,
       ConvPass pass);
  ~Conv();
  Conv(Conv&&) noexcept;
  Conv& operator=(Conv&&) noexcept;

  // oneDNN's name for the implementation it picked ("brgconv:avx512_core").
  std::string implementation() const;

  void forward(const float* src, const float* weights, const float* bias,
               float* dst) const;
  void backward_data(const float* diff_dst, const float* weights,
                     float* diff_src) const;
  // Overwrites diff_weights and (with bias) diff_bias.
  void backward_weights(const float* src, const float* diff_dst,
                        float* diff_weights, float* diff_bias) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_CONV_H_
