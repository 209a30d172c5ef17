// Internal: iterating the (n, spatial) cells of strided (N, C, spatial...)
// views, for layers that act on each cell's C channel values (softmax,
// losses, biases). For every cell, fn gets the cell's sample index (within the
// views) and, per view, the element offset of its channel 0; the channel
// values then sit at offset + c * strides[1] (1 in channels-last storage).
//
//   for_each_cell<2>(x.extent(), {x.strides(), y.strides()},
//                    [&](Index n, const std::array<Index, 2>& at) { ... });
#ifndef DISTCONV_KERNELS_INTERNAL_CELL_WALK_H_
#define DISTCONV_KERNELS_INTERNAL_CELL_WALK_H_

#include <array>

#include "distconv/shape.h"
#include "distconv/strided_view.h"

namespace distconv::internal {

// Visits the cells of `extent` (N, C, spatial...; C is not iterated) in
// row-major order, the last dimension in the innermost loop. Nothing when
// any extent, C included, is zero.
template <int K, typename Fn>
void for_each_cell(const Shape& extent, const std::array<Shape, K>& strides,
                   Fn fn) {
  if (extent.volume() == 0) return;
  const int last = extent.ndims() - 1;
  Shape i = Shape::filled(extent.ndims(), 0);  // i[1] stays 0
  while (true) {
    std::array<Index, K> at{};
    for (int k = 0; k < K; ++k) {
      for (int d = 0; d < last; ++d) at[k] += i[d] * strides[k][d];
    }
    for (Index w = 0; w < extent[last]; ++w) {
      fn(i[0], static_cast<const std::array<Index, K>&>(at));
      for (int k = 0; k < K; ++k) at[k] += strides[k][last];
    }
    int d = last - 1;
    for (; d >= 0; --d) {
      if (d == 1) continue;
      if (++i[d] < extent[d]) break;
      i[d] = 0;
    }
    if (d < 0) return;
  }
}

// Calls fn(first, channels, stride) for every (sample, spatial) cell of a
// view, with a pointer to the cell's channel 0 and the channel stride (1
// when stored channels-last), so that loops over channels vectorise.
template <typename T, typename Fn>
void for_each_cell(const StridedView<T>& v, Fn fn) {
  for_each_cell<1>(v.extent(), {v.strides()},
                   [&](Index, const std::array<Index, 1>& at) {
                     fn(v.data() + at[0], v.extent()[1], v.strides()[1]);
                   });
}

// v(n, c, ...) += values[c] in every cell (a bias; values may be of the
// compute type, fp32 for bf16 cells).
template <typename T, typename P>
void add_per_channel(const StridedView<T>& v, const P* values) {
  for_each_cell(v, [&](T* x, Index channels, Index stride) {
    for (Index c = 0; c < channels; ++c) {
      x[c * stride] = x[c * stride] + values[c];
    }
  });
}

// sums[c] += v(n, c, ...) over every cell (a bias gradient), summed in the
// type of sums.
template <typename T, typename P>
void sum_per_channel(const StridedView<const T>& v, P* sums) {
  for_each_cell(v, [&](const T* x, Index channels, Index stride) {
    for (Index c = 0; c < channels; ++c) sums[c] += x[c * stride];
  });
}

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_INTERNAL_CELL_WALK_H_
