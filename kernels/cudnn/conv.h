// CudnnConv<T>: one local convolution on GPU memory through cuDNN, the
// device counterpart of LocalConv (kernels/local_conv.h) with the same
// arguments: a ConvDesc carrying the window's padding, the extents (n, C or
// F, spatial...) and element strides of the views it will run on, and the
// pass. Views are strided (a window of a shard with halos, channels-last or
// channels-first): cuDNN reads and writes them in place. Built only with
// --config=cuda.
//
//   CudnnContext ctx(stream);
//   CudnnConv<float> piece(ctx, window_desc, x_view.extent(),
//                          x_view.strides(), y_view.extent(),
//                          y_view.strides(), ConvPass::kForward);
//   piece.forward(x_view, weights, bias, y_view);   // queued on `stream`
//
// Weights (F, C / groups, k...) and bias (F) are dense device arrays. With
// channels-last views the kernel runs cuDNN's channels-last filters on a
// copy of the weights (rearranged on the stream, a few microseconds), and
// hands back weight gradients in the caller's layout.
//
// Asymmetric padding (a window at one edge of a split) runs on a padded
// copy of the input made on the stream: cuDNN pads symmetrically only.
//
// The algorithm of the pass is picked at construction (GpuConvOptions:
// cuDNN's heuristics, or timed runs on scratch buffers) among those whose
// workspace fits the limit, and the context's workspace is grown to it.
//
// Defined for every element type of distconv/element_types.h. Weights, bias and
// their gradients are Compute<T> (distconv/bf16.h): for bf16 and fp16 tensors
// they are fp32 arrays, rounded to T on the stream before cuDNN reads them;
// cuDNN accumulates in fp32 (tensor cores allowed), and the 16-bit
// gradients it writes are added to the fp32 ones (one rounding each).
#ifndef DISTCONV_KERNELS_CUDNN_CONV_H_
#define DISTCONV_KERNELS_CUDNN_CONV_H_

#include <memory>
#include <string>

#include "distconv/bf16.h"
#include "distconv/conv_desc.h"
#include "distconv/device_space.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/conv_pass.h"
#include "kernels/cudnn/cudnn_context.h"
#include "kernels/gpu_conv_options.h"

namespace distconv {

template <typename T>
class CudnnConv {
 public:
  template <typename U>
  using View = StridedView<U, DeviceSpace>;
  using P = Compute<T>;  // weights, bias, gradients

  // Throws kUnsupported where cuDNN has no algorithm for the problem within
  // the workspace limit, kDevice where a CUDA or cuDNN call fails.
  CudnnConv(CudnnContext& context, const ConvDesc& desc,
            const Shape& src_extent, const Shape& src_strides,
            const Shape& dst_extent, const Shape& dst_strides, ConvPass pass,
            const GpuConvOptions& options = {});
  ~CudnnConv();
  CudnnConv(CudnnConv&&) noexcept;
  CudnnConv& operator=(CudnnConv&&) noexcept;

  // "cudnn implicit_precomp_gemm, channels-last, in place".
  std::string implementation() const;
  // cuDNN's number for the pass's algorithm (a cudnnConvolution*Algo_t)
  // and its math (a cudnnMathType_t: cuDNN lists algorithms per math), and
  // the choice of another pair, as a layer's ranks agree on.
  int algorithm() const;
  int math() const;
  void set_algorithm(int algorithm, int math);
  // Whether cuDNN runs on dense copies rather than the views themselves.
  bool on_copies() const;
  // What ranks compare to agree on algorithms: the pass, element type,
  // math, window and the views' extents and strides as text (equal for
  // equal problems), and the chosen algorithm's time in cuDNN's timed
  // search, in ms (0 with cuDNN's heuristics).
  const std::string& problem() const;
  float algorithm_ms() const;
  // As made (the layers put their agreed algorithms in options().cache).
  const GpuConvOptions& options() const;

  // dst = conv(src) (+ bias, where not null).
  void forward(View<const T> src, const P* weights, const P* bias,
               View<T> dst) const;
  // diff_src = the adjoint of forward applied to diff_dst (overwrites).
  void backward_data(View<const T> diff_dst, const P* weights,
                     View<T> diff_src) const;
  // Adds this piece's weight gradient to diff_weights and, where
  // diff_bias is not null, its bias gradient to diff_bias.
  void backward_weights(View<const T> src, View<const T> diff_dst,
                        P* diff_weights, P* diff_bias) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDNN_CONV_H_
