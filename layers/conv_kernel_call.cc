#include "layers/conv_kernel_call.h"

#include <algorithm>

namespace distconv {

double ConvKernelCall::flops() const {
  double taps = 1;
  for (int j = 0; j < desc.spatial_dims(); ++j) {
    // Forward and backward-weights: every tap of each output cell's window.
    const double out = double(dst_extent[j + 2]) * double(desc.kernel[j]);
    if (pass != ConvPass::kBackwardData) {
      taps *= out;
      continue;
    }
    // Backward-data: each input-gradient cell gathers prod(k) / prod(s)
    // taps on average, and no more than the output cells' windows hold
    // (a window that shrinks the input, such as a dense layer's).
    taps *= std::min(double(src_extent[j + 2]) * double(desc.kernel[j]) /
                         double(desc.stride[j]),
                     out);
  }
  // Per (C, F/g) channel pair of each sample.
  const Shape& cells =
      pass == ConvPass::kBackwardData ? src_extent : dst_extent;
  const Index per_group = pass == ConvPass::kBackwardData
                              ? desc.out_channels / desc.groups
                              : desc.in_channels / desc.groups;
  return 2.0 * double(cells[0]) * double(cells[1]) * double(per_group) * taps;
}

bool operator==(const ConvKernelCall& a, const ConvKernelCall& b) {
  return a.desc == b.desc && a.src_extent == b.src_extent &&
         a.src_strides == b.src_strides && a.dst_extent == b.dst_extent &&
         a.dst_strides == b.dst_strides && a.pass == b.pass && a.impl == b.impl;
}

ConvKernelCall planned_call(const ConvDesc& desc, const Shape& src_extent,
                            const Shape& src_strides, const Shape& dst_extent,
                            const Shape& dst_strides, ConvPass pass) {
  return ConvKernelCall{
      desc,
      src_extent,
      src_strides,
      dst_extent,
      dst_strides,
      pass,
      heuristic_conv_impl(desc, pass, src_extent, dst_extent)};
}

}  // namespace distconv
