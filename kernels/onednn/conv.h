// oneDNN convolution kernels (CPU, fp32): forward, backward-data and
// backward-weights with bias, planned once (primitive descriptors,
// primitives, weight reorders) and executed many times on dense
// channels-last arrays (N, [D,] H, W, C), the layout oneDNN's AVX-512
// kernels are fastest with. Weights and biases are plain: (F, C / g, k...)
// and (F).
//
// How it runs is the caller's choice (kernels/conv_impl.h): on the
// channels-last arrays themselves; on copies in oneDNN's 16-channel
// blocked layout (buffers of the plan, as large as the activations; any
// pass, where oneDNN picks that layout for the problem); or, for
// backward-data with stride 1, as the adjoint forward convolution
// (weights transposed and flipped into a buffer of the plan, mirrored
// padding). An implementation that cannot run the problem on this CPU
// throws kUnsupported saying why.
//
// Local problems come from ConvGeometry windows: padding may be asymmetric
// and differ from the global description's.
//
//   ConvDesc local = ...;                       // window's padding
//   onednn::Conv conv(local, {1, 16, 34, 64}, {1, 16, 32, 64},
//                     ConvPass::kForward, ConvImpl::kChannelsLast);
//   conv.forward(src, weights, bias, dst);      // channels-last arrays
#ifndef DISTCONV_KERNELS_ONEDNN_CONV_H_
#define DISTCONV_KERNELS_ONEDNN_CONV_H_

#include <memory>
#include <string>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "kernels/conv_impl.h"
#include "kernels/conv_pass.h"

namespace distconv::onednn {

class Conv {
 public:
  // Throws distconv::Error (kUnsupported, saying why) if oneDNN cannot do
  // it with `impl` (kReference never: it is not oneDNN's).
  Conv(const ConvDesc& desc, const Shape& src_shape, const Shape& dst_shape,
       ConvPass pass, ConvImpl impl);
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
