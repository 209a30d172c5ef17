// ConvKernelCall: one local convolution a plan runs, as a value: what
// LocalConv is built from (the window's padding and the buffers' channels
// in `desc`, the views' extents and strides, the pass), and its FLOPs.
#ifndef DISTCONV_LAYERS_CONV_KERNEL_CALL_H_
#define DISTCONV_LAYERS_CONV_KERNEL_CALL_H_

#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "kernels/conv_pass.h"

namespace distconv {

struct ConvKernelCall {
  ConvDesc desc;
  Shape src_extent, src_strides, dst_extent, dst_strides;
  ConvPass pass = ConvPass::kForward;
  // FLOPs of the call, 2 per multiply-add: forward and backward-weights
  // over the output cells (dst_extent), backward-data over the input
  // gradient cells it writes (src_extent; with stride s, 1/prod(s) of the
  // taps land on each).
  double flops() const;
};
bool operator==(const ConvKernelCall& a, const ConvKernelCall& b);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_CONV_KERNEL_CALL_H_
