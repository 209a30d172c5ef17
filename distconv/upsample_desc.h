// UpsampleDesc: nearest-neighbour upsampling by an integer factor per
// spatial dimension, as a plain value, and the distributions it maps
// between. Pure: no MPI, no kernels.
//
// For a tensor (N, C, spatial...) and factors f (one per spatial
// dimension, each >= 1), the output has extents f[d] * extent[d] and
//
//   y[n, c, i0, i1, ...] = x[n, c, i0 / f0, i1 / f1, ...]
//
// Its gradient sums each f0 x f1 x ... block of diff_dst into one cell of
// diff_src. dst_distribution() scales every part's shard by the factors,
// so each rank's output cells come from its own input cells only.
//
//   UpsampleDesc up{Shape{2, 2}};
//   up.dst_shape({1, 16, 64, 64});                        // {1, 16, 128, 128}
//   Distribution src(Shape{1, 16, 10, 10}, Shape{1, 1, 3, 1}); // H: 4, 3, 3
//   up.dst_distribution(src);                             // H: 8, 6, 6 of 20
#ifndef DISTCONV_UPSAMPLE_DESC_H_
#define DISTCONV_UPSAMPLE_DESC_H_

#include "distconv/distribution.h"
#include "distconv/shape.h"

namespace distconv {

struct UpsampleDesc {
  Shape factors;  // one per spatial dimension, >= 1

  int spatial_dims() const { return factors.ndims(); }
  // Throws distconv::Error naming the values unless `src_shape` is (N, C,
  // spatial...) with one spatial extent per factor (1 to 3 of them), every
  // extent >= 0, every factor >= 1, and the output extents fit in an Index.
  void validate(const Shape& src_shape) const;
  Shape dst_shape(const Shape& src_shape) const;  // validates first
  // The output distribution: N and C split as in `src`, each spatial part
  // p of `src` scaled to [f * begin(p), f * end(p)). Validates first.
  Distribution dst_distribution(const Distribution& src) const;
};

}  // namespace distconv

#endif  // DISTCONV_UPSAMPLE_DESC_H_
