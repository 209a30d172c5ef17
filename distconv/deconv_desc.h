// DeconvDesc: what a transposed convolution (deconvolution) computes, as a
// plain value. Pure: no MPI, no kernels.
//
// A transposed convolution is the adjoint of a convolution: its forward is
// that convolution's backward-data, its backward-data that convolution's
// forward. `adjoint()` is the convolution (from out_channels to
// in_channels, same kernel, stride, dilation and padding), so shapes follow
// PyTorch's ConvTranspose: input (N, in_channels, spatial...), weights
// (in_channels, out_channels / groups, k...), bias (out_channels), and per
// spatial dimension
//   output = (input - 1) * stride - padding_lower - padding_upper
//            + (kernel - 1) * dilation + 1 + output_padding,
// where output_padding (0 <= output_padding < stride) picks one of the
// `stride` output sizes that the adjoint convolution maps to `input`.
//
//   DeconvDesc up = DeconvDesc::make(/*in=*/32, /*out=*/16, /*kernel=*/{4, 4});
//   up.stride = {2, 2};
//   up.padding_lower = up.padding_upper = {1, 1};
//   up.dst_shape({1, 32, 256, 256});                    // {1, 16, 512, 512}
#ifndef DISTCONV_DECONV_DESC_H_
#define DISTCONV_DECONV_DESC_H_

#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"

namespace distconv {

struct DeconvDesc {
  Index in_channels = 0;
  Index out_channels = 0;
  Index groups = 1;
  Shape kernel;          // spatial extents of the kernel
  Shape stride;          // >= 1
  Shape dilation;        // >= 1; 1 = dense
  Shape padding_lower;   // >= 0
  Shape padding_upper;   // >= 0
  Shape output_padding;  // >= 0, < stride
  ConvBias bias = ConvBias::kNone;  // over out_channels
  // One entry per spatial dimension, or empty: kZeros in every one. With
  // circular padding the layer is the adjoint of the circular convolution:
  // what lands in the padding past one end of the output is added to the
  // cells at the other end.
  std::vector<PaddingMode> padding_mode;

  // Stride and dilation 1, no padding, no bias, one group.
  static DeconvDesc make(Index in_channels, Index out_channels,
                         const Shape& kernel);

  int spatial_dims() const { return kernel.ndims(); }
  // Whether spatial dimension `d` (0-based) wraps around.
  bool circular(int d) const { return is_circular(padding_mode, d); }
  // The convolution this one is the adjoint of (no bias: the transposed
  // convolution's bias is over its own outputs).
  ConvDesc adjoint() const;
  // Throws distconv::Error naming the values unless `src_shape` (N, C,
  // spatial...) and this description fit together and give a non-empty
  // output that the adjoint convolution maps back to `src_shape`.
  void validate(const Shape& src_shape) const;
  Shape dst_shape(const Shape& src_shape) const;  // validates first
  Shape weights_shape() const;  // (in_channels, out_channels / groups, k...)

  friend bool operator==(const DeconvDesc& a, const DeconvDesc& b) {
    return a.in_channels == b.in_channels &&
           a.out_channels == b.out_channels && a.groups == b.groups &&
           a.kernel == b.kernel && a.stride == b.stride &&
           a.dilation == b.dilation && a.padding_lower == b.padding_lower &&
           a.padding_upper == b.padding_upper &&
           a.output_padding == b.output_padding && a.bias == b.bias &&
           a.padding_mode == b.padding_mode;
  }
  friend bool operator!=(const DeconvDesc& a, const DeconvDesc& b) {
    return !(a == b);
  }
};

}  // namespace distconv

#endif  // DISTCONV_DECONV_DESC_H_
