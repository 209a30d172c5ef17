// ConvKernelCall: one local convolution a plan runs, as a value: what
// LocalConv is built from (the window's padding and the buffers' channels
// in `desc`, the views' extents and strides, the pass, the implementation
// the heuristic picks for it), and its FLOPs.
#ifndef DISTCONV_LAYERS_CONV_KERNEL_CALL_H_
#define DISTCONV_LAYERS_CONV_KERNEL_CALL_H_

#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "kernels/conv_impl.h"
#include "kernels/conv_pass.h"

namespace distconv {

struct ConvKernelCall {
  ConvDesc desc;
  Shape src_extent, src_strides, dst_extent, dst_strides;
  ConvPass pass = ConvPass::kForward;
  // heuristic_conv_impl() of desc and pass (planned_call() sets it); a
  // layer with ConvImplSearch::kMeasured runs what its ranks timed instead.
  ConvImpl impl = ConvImpl::kChannelsLast;
  // FLOPs of the call, 2 per multiply-add: forward and backward-weights
  // over the output cells (dst_extent), every tap of their windows;
  // backward-data over the input gradient cells it writes (src_extent;
  // with stride s, 1/prod(s) of the taps land on each), in each dimension
  // no more than the output cells' taps (a window that shrinks the input).
  double flops() const;
};
bool operator==(const ConvKernelCall& a, const ConvKernelCall& b);

// The call with the heuristic's implementation.
ConvKernelCall planned_call(const ConvDesc& desc, const Shape& src_extent,
                            const Shape& src_strides, const Shape& dst_extent,
                            const Shape& dst_strides, ConvPass pass);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_CONV_KERNEL_CALL_H_
