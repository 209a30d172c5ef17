#include "layers/conv_kernel_call.h"

namespace distconv {

double ConvKernelCall::flops() const {
  const double taps = static_cast<double>(desc.kernel.volume());
  if (pass == ConvPass::kBackwardData) {
    // Each input-gradient cell gathers F/g * prod(k) / prod(stride) taps
    // on average.
    double strides = 1;
    for (int d = 0; d < desc.stride.ndims(); ++d) strides *= desc.stride[d];
    return 2.0 * double(src_extent.volume()) *
           double(desc.out_channels / desc.groups) * taps / strides;
  }
  // Each output cell (of every filter) takes C/g * prod(k) multiply-adds.
  return 2.0 * double(dst_extent.volume()) *
         double(desc.in_channels / desc.groups) * taps;
}

bool operator==(const ConvKernelCall& a, const ConvKernelCall& b) {
  return a.desc == b.desc && a.src_extent == b.src_extent &&
         a.src_strides == b.src_strides && a.dst_extent == b.dst_extent &&
         a.dst_strides == b.dst_strides && a.pass == b.pass && a.impl == b.impl;
}

ConvKernelCall planned_call(const ConvDesc& desc, const Shape& src_extent,
                            const Shape& src_strides, const Shape& dst_extent,
                            const Shape& dst_strides, ConvPass pass) {
  return ConvKernelCall{desc,
                        src_extent,
                        src_strides,
                        dst_extent,
                        dst_strides,
                        pass,
                        heuristic_conv_impl(desc, pass)};
}

}  // namespace distconv
