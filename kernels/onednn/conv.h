// oneDNN convolution kernels (CPU, fp32): forward, backward-data and
// backward-weights with bias, planned once (primitive descriptors,
// primitives, weight reorders) and executed many times on dense
// channels-last arrays (N, [D,] H, W, C), the layout oneDNN's AVX-512
// kernels are fastest with. Weights and biases are plain: (F, C / g, k...)
// and (F).
//
// How it runs is the caller's choice (kernels/conv_impl.h): on the
// channels-last arrays themselves (fp32, or with kNative16 bf16 or fp16
// arrays and oneDNN's own 16-bit kernels: weights rounded to the type from
// fp32, weight and bias gradients fp32); on copies in oneDNN's 16-channel
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

#include "distconv/bf16.h"
#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "kernels/conv_impl.h"
#include "kernels/conv_pass.h"

namespace distconv::onednn {

// The activations' element type.
enum class ConvData { kF32, kBf16, kF16 };

class Conv {
 public:
  // Throws distconv::Error (kUnsupported, saying why) if oneDNN cannot do
  // it with `impl` (kReference never: it is not oneDNN's).
  // 16-bit `data` takes kNative16, which takes nothing else.
  Conv(const ConvDesc& desc, const Shape& src_shape, const Shape& dst_shape,
       ConvPass pass, ConvImpl impl, ConvData data = ConvData::kF32);
  ~Conv();
  Conv(Conv&&) noexcept;
  Conv& operator=(Conv&&) noexcept;

  // oneDNN's name for the implementation it picked ("brgconv:avx512_core").
  std::string implementation() const;
  // The bytes of the buffers it holds: blocked copies of the activations,
  // weights in the primitive's layout, the adjoint's weights (oneDNN's
  // scratchpad, allocated per call, not included).
  Index held_bytes() const;

  // A: float, bf16 or fp16, as planned (else kState).
  template <typename A>
  void forward(const A* src, const float* weights, const float* bias,
               A* dst) const;
  template <typename A>
  void backward_data(const A* diff_dst, const float* weights,
                     A* diff_src) const;
  // Overwrites diff_weights and (with bias) diff_bias.
  template <typename A>
  void backward_weights(const A* src, const A* diff_dst, float* diff_weights,
                        float* diff_bias) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;

  void check(ConvPass pass, ConvData data) const;
  void run_forward(const void* src, const float* weights, const float* bias,
                   void* dst) const;
  void run_backward_data(const void* diff_dst, const float* weights,
                         void* diff_src) const;
  void run_backward_weights(const void* src, const void* diff_dst,
                            float* diff_weights, float* diff_bias) const;
};

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_CONV_H_
