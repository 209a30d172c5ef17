// InterpolateDesc: linear interpolation (bilinear in 2D, trilinear in 3D)
// of a tensor's spatial dimensions to a given size, as PyTorch's
// F.interpolate(mode='bilinear' / 'trilinear') computes it, and the
// distributions and halos it maps between. Pure: no MPI, no kernels.
//
// Per spatial dimension of input extent I and output extent O, output o
// reads two input cells (LinearTap):
//   align_corners:  s = o * (I - 1) / (O - 1)            (0 when O == 1)
//   otherwise:      s = max(0, (o + 0.5) * r - 0.5),  r = scales[d] if
//                   given (PyTorch's 1 / scale_factor), else I / O
//   i0 = floor(s), i1 = min(i0 + 1, I - 1), w1 = s - i0, w0 = 1 - w1;
// and the output is the product of the dimensions' weights over the
// 2^k corners. Its gradient adds w * dy into each corner.
//
// dst_distribution() keeps the input's partitions of N and C and balances
// each spatial dimension's output over the same number of parts;
// src_layout() gives each part the input halos its outputs' taps reach
// (one cell at a part's edges when upsampling evenly split tensors; wider
// where a part's outputs read far, e.g. a 1x1 input upsampled: every part
// reads cell 0).
//
//   InterpolateDesc d = InterpolateDesc::of_size({128, 128});
//   d.dst_shape({2, 64, 32, 32});                    // {2, 64, 128, 128}
//   d.tap(0, 32, 5);   // {i0 = 0, i1 = 1, w0 = 0.875, w1 = 0.125}
#ifndef DISTCONV_INTERPOLATE_DESC_H_
#define DISTCONV_INTERPOLATE_DESC_H_

#include <vector>

#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/shape.h"

namespace distconv {

enum class AlignCorners { kNo, kYes };

// Output o's two input cells along one dimension and their weights.
struct LinearTap {
  Index i0 = 0, i1 = 0;
  double w0 = 1, w1 = 0;
};

struct InterpolateDesc {
  Shape size;  // output spatial extents, >= 1 each; 1 to 3 of them
  AlignCorners align_corners = AlignCorners::kNo;
  // Per spatial dimension: the ratio the source coordinates use without
  // aligned corners (PyTorch's 1 / scale_factor); empty: input / output.
  std::vector<double> scales;

  static InterpolateDesc of_size(const Shape& size);

  int spatial_dims() const { return size.ndims(); }
  // Throws distconv::Error naming the values unless `src_shape` is (N, C,
  // spatial...) with one spatial extent >= 1 per output extent, every
  // output extent >= 1, and scales (if any) positive and finite, one per
  // spatial dimension.
  void validate(const Shape& src_shape) const;
  Shape dst_shape(const Shape& src_shape) const;  // validates first
  // Output o's taps along spatial dimension d (0-based) of input extent
  // `in`.
  LinearTap tap(int d, Index in, Index o) const;
  // N and C as `src`, each spatial dimension's output balanced over the
  // same number of parts. Validates first.
  Distribution dst_distribution(const Distribution& src) const;
  // `src` with each part's halos covering the input cells its shard of
  // `dst` reads, channels-last.
  HaloLayout src_layout(const Distribution& src,
                        const Distribution& dst) const;
};

}  // namespace distconv

#endif  // DISTCONV_INTERPOLATE_DESC_H_
