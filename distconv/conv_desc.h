// ConvDesc: what a convolution computes, as a plain value (describe, then
// plan, then execute). Pure: no MPI, no kernels.
//
// Tensors are (N, C, [D,] H, W); weights are (F, C / groups, [KD,] KH, KW);
// the spatial fields have one entry per spatial dimension (2 or 3). Dilation
// is the distance between kernel taps: 1 is a dense kernel (oneDNN's
// "dilation 0"). Padding is asymmetric: `padding_lower` before, and
// `padding_upper` after, the input in each spatial dimension. It holds
// zeros, or, in a dimension whose padding mode is kCircular, the input's
// cells from the other end (PyTorch's padding_mode="circular": a periodic
// domain), so that padding of at most the input's extent wraps around
// once.
//
//   ConvDesc conv = ConvDesc::make(/*in=*/16, /*out=*/16, /*kernel=*/{3, 3});
//   conv.padding_lower = conv.padding_upper = {1, 1};     // "same"
//   conv.dst_shape({1, 16, 1024, 1024});                  // {1, 16, 1024, 1024}
//   conv.padding_mode = {PaddingMode::kCircular, PaddingMode::kZeros};
//   // periodic in H: row -1 is row 1023, row 1024 is row 0
#ifndef DISTCONV_CONV_DESC_H_
#define DISTCONV_CONV_DESC_H_

#include <vector>

#include "distconv/shape.h"

namespace distconv {

enum class ConvBias { kNone, kAdd };
// What padding holds in one spatial dimension (PyTorch's padding_mode).
enum class PaddingMode { kZeros, kCircular };
const char* to_string(PaddingMode mode);
// Whether spatial dimension `d` of a description with these padding modes
// (one per spatial dimension, or none: zeros) wraps around.
inline bool is_circular(const std::vector<PaddingMode>& modes, int d) {
  return !modes.empty() && modes[d] == PaddingMode::kCircular;
}
// Whether any dimension does.
inline bool any_circular(const std::vector<PaddingMode>& modes) {
  for (PaddingMode m : modes) {
    if (m == PaddingMode::kCircular) return true;
  }
  return false;
}

struct ConvDesc {
  Index in_channels = 0;
  Index out_channels = 0;
  Index groups = 1;
  Shape kernel;         // spatial extents of the kernel
  Shape stride;         // >= 1
  Shape dilation;       // >= 1; 1 = dense
  Shape padding_lower;  // >= 0
  Shape padding_upper;  // >= 0
  ConvBias bias = ConvBias::kNone;
  // One entry per spatial dimension, or empty: kZeros in every one.
  std::vector<PaddingMode> padding_mode;

  // Stride and dilation 1, no padding, no bias, one group.
  static ConvDesc make(Index in_channels, Index out_channels,
                       const Shape& kernel);

  int spatial_dims() const { return kernel.ndims(); }
  // Whether spatial dimension `d` (0-based) wraps around.
  bool circular(int d) const { return is_circular(padding_mode, d); }
  // Throws distconv::Error naming the values unless `src_shape` (N, C,
  // spatial...) and this description fit together and give a non-empty
  // output: channels divisible by groups, C == in_channels, positive
  // stride and dilation, non-negative padding, a kernel no larger than the
  // padded input, a padding mode per spatial dimension (or none), circular
  // padding no wider than the input.
  void validate(const Shape& src_shape) const;
  Shape dst_shape(const Shape& src_shape) const;  // validates first
  Shape weights_shape() const;                    // (F, C / groups, k...)

  friend bool operator==(const ConvDesc& a, const ConvDesc& b) {
    return a.in_channels == b.in_channels &&
           a.out_channels == b.out_channels && a.groups == b.groups &&
           a.kernel == b.kernel && a.stride == b.stride &&
           a.dilation == b.dilation && a.padding_lower == b.padding_lower &&
           a.padding_upper == b.padding_upper && a.bias == b.bias &&
           a.padding_mode == b.padding_mode;
  }
  friend bool operator!=(const ConvDesc& a, const ConvDesc& b) {
    return !(a == b);
  }
};

}  // namespace distconv

#endif  // DISTCONV_CONV_DESC_H_
