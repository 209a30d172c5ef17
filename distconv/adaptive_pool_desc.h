// AdaptivePoolDesc: adaptive average or max pooling to a given output size
// (PyTorch's AdaptiveAvgPool2d/3d, AdaptiveMaxPool2d/3d), as a plain value.
// Pure: no MPI, no kernels.
//
// Per spatial dimension of input extent I and output extent O, output o
// covers the inputs [floor(o * I / O), ceil((o + 1) * I / O)): windows of
// varying size that may overlap by one cell, every input in at least one.
// Average pooling divides each window's sum by its cell count; max
// pooling takes its largest value (the first in row-major order among
// equals, the last NaN where there are NaNs, as PyTorch's CPU kernels do),
// and its gradient goes to that cell. Global pooling is the output size 1.
//
// The output's N and C are split as the input's and its spatial
// dimensions balanced over the same parts (dst_distribution).
//
//   AdaptivePoolDesc d{AdaptivePoolKind::kAverage, Shape{1, 1, 1}};
//   d.dst_shape({2, 64, 32, 32, 32});   // {2, 64, 1, 1, 1}
//   d.window(0, 10, 2, 3);              // inputs [6, 10) of 10 to 3 outputs
#ifndef DISTCONV_ADAPTIVE_POOL_DESC_H_
#define DISTCONV_ADAPTIVE_POOL_DESC_H_

#include "distconv/distribution.h"
#include "distconv/shape.h"

namespace distconv {

enum class AdaptivePoolKind { kAverage, kMax };
const char* to_string(AdaptivePoolKind kind);  // "average", "max"

struct AdaptivePoolDesc {
  AdaptivePoolKind kind = AdaptivePoolKind::kAverage;
  Shape size;  // output spatial extents, >= 1 each; 1 to 3 of them

  int spatial_dims() const { return size.ndims(); }
  // Throws distconv::Error naming the values unless `src_shape` is (N, C,
  // spatial...) with one spatial extent >= 1 per output extent (each >= 1).
  void validate(const Shape& src_shape) const;
  Shape dst_shape(const Shape& src_shape) const;  // validates first
  // Output o's inputs along a dimension of input extent `in` and output
  // extent `out`: [first, second).
  static std::pair<Index, Index> window(Index in, Index out, Index o);
  // N and C as `src`, each spatial dimension balanced over the same number
  // of parts. Validates first.
  Distribution dst_distribution(const Distribution& src) const;
};

}  // namespace distconv

#endif  // DISTCONV_ADAPTIVE_POOL_DESC_H_
