// PoolDesc: what a pooling layer computes, as a plain value. Pure: no MPI,
// no kernels.
//
// Tensors are (N, C, [D,] H, W); the spatial fields have one entry per
// spatial dimension (2 or 3). Output o of a spatial dimension pools inputs
// [o * stride - padding_lower, o * stride - padding_lower + kernel); cells
// outside the input are padding:
//  - kMax: padding never wins; ties go to the first cell in window order
//    (outermost dimension first), in forward and backward alike;
//  - kAverageIncludePadding: the sum of the window's input cells divided by
//    the kernel's volume (padding counts as zero);
//  - kAverageExcludePadding: divided by the number of input cells in the
//    window.
// Padding must be smaller than the kernel, so every window holds at least
// one input cell. Where the padding mode is kCircular (ConvDesc), padding
// holds the cells of the other end instead (as if the input were padded by
// wrapping first): they count as input cells, also for kMax and both
// averages.
//
//   PoolDesc pool = PoolDesc::make(PoolKind::kMax, {3, 3});   // stride 3
//   pool.stride = {2, 2};
//   pool.padding_lower = pool.padding_upper = {1, 1};
//   pool.dst_shape({1, 16, 512, 512});                 // {1, 16, 256, 256}
#ifndef DISTCONV_POOL_DESC_H_
#define DISTCONV_POOL_DESC_H_

#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"

namespace distconv {

enum class PoolKind { kMax, kAverageIncludePadding, kAverageExcludePadding };

struct PoolDesc {
  PoolKind kind = PoolKind::kMax;
  Shape kernel;         // spatial extents of the window
  Shape stride;         // >= 1
  Shape padding_lower;  // >= 0, < kernel
  Shape padding_upper;  // >= 0, < kernel
  // One entry per spatial dimension, or empty: kZeros in every one.
  std::vector<PaddingMode> padding_mode;

  // Stride equal to the kernel (non-overlapping windows), no padding.
  static PoolDesc make(PoolKind kind, const Shape& kernel);

  int spatial_dims() const { return kernel.ndims(); }
  // Whether spatial dimension `d` (0-based) wraps around.
  bool circular(int d) const { return is_circular(padding_mode, d); }
  // Throws distconv::Error naming the values unless `src_shape` (N, C,
  // spatial...) and this description fit together and give a non-empty
  // output.
  void validate(const Shape& src_shape) const;
  Shape dst_shape(const Shape& src_shape) const;  // validates first
  // The depthwise convolution over `channels` that reads the same windows:
  // what ConvGeometry plans a distributed pooling with.
  ConvDesc window_conv(Index channels) const;

  friend bool operator==(const PoolDesc& a, const PoolDesc& b) {
    return a.kind == b.kind && a.kernel == b.kernel && a.stride == b.stride &&
           a.padding_lower == b.padding_lower &&
           a.padding_upper == b.padding_upper &&
           a.padding_mode == b.padding_mode;
  }
  friend bool operator!=(const PoolDesc& a, const PoolDesc& b) {
    return !(a == b);
  }
};

const char* to_string(PoolKind kind);

}  // namespace distconv

#endif  // DISTCONV_POOL_DESC_H_
