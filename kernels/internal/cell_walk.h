// Internal: iterating the (n, spatial) cells of strided (N, C, spatial...)
// views, for layers that act on each cell's C channel values (softmax,
// losses, biases). For every cell, fn gets the cell's sample index (within the
// views) and, per view, the element offset of its channel 0; the channel
// values then sit at offset + c * strides[1] (1 in channels-last storage).
// for_each_row visits the same cells a row at a time (the cells along the
// last dimension), for loops vectorised across cells.
//
//   for_each_cell<2>(x.extent(), {x.strides(), y.strides()},
//                    [&](Index n, const std::array<Index, 2>& at) { ... });
#ifndef DISTCONV_KERNELS_INTERNAL_CELL_WALK_H_
#define DISTCONV_KERNELS_INTERNAL_CELL_WALK_H_

#include <array>

#include "distconv/shape.h"
#include "distconv/strided_view.h"

namespace distconv::internal {

// Visits the rows of cells of `extent` (N, C, spatial...; C is not
// iterated): every position of N and of the spatial dimensions but the
// last, in row-major order. fn(n, at) gets the sample index and, per view,
// the offset of channel 0 of the row's first cell; the row's extent.back()
// cells lie strides[k].back() apart. Nothing when any extent, C included,
// is zero.
template <int K, typename Fn>
void for_each_row(const Shape& extent, const std::array<Shape, K>& strides,
                  Fn fn) {
  if (extent.volume() == 0) return;
  const int last = extent.ndims() - 1;
  Shape i = Shape::filled(extent.ndims(), 0);  // i[1] and i[last] stay 0
  while (true) {
    std::array<Index, K> at{};
    for (int k = 0; k < K; ++k) {
      for (int d = 0; d < last; ++d) at[k] += i[d] * strides[k][d];
    }
    fn(i[0], static_cast<const std::array<Index, K>&>(at));
    int d = last - 1;
    for (; d >= 0; --d) {
      if (d == 1) continue;
      if (++i[d] < extent[d]) break;
      i[d] = 0;
    }
    if (d < 0) return;
  }
}

// Visits the cells of `extent` (N, C, spatial...; C is not iterated) in
// row-major order, the last dimension in the innermost loop: fn(n, at) as
// for for_each_row, for each cell.
template <int K, typename Fn>
void for_each_cell(const Shape& extent, const std::array<Shape, K>& strides,
                   Fn fn) {
  const int last = extent.ndims() - 1;
  for_each_row<K>(extent, strides, [&](Index n, std::array<Index, K> at) {
    for (Index w = 0; w < extent[last]; ++w) {
      fn(n, static_cast<const std::array<Index, K>&>(at));
      for (int k = 0; k < K; ++k) at[k] += strides[k][last];
    }
  });
}

// Calls fn(row, cells, cell_stride) for every row of a view (the cells
// along its last dimension), with a pointer to channel 0 of the row's first
// cell.
template <typename T, typename Fn>
void for_each_view_row(const StridedView<T>& v, Fn fn) {
  const Shape& extent = v.extent();
  const int last = extent.ndims() - 1;
  for_each_row<1>(extent, {v.strides()},
                  [&](Index, const std::array<Index, 1>& at) {
                    fn(v.data() + at[0], extent[last], v.strides()[last]);
                  });
}

// v(n, c, ...) += values[c] in every cell (a bias; values may be of the
// compute type, fp32 for bf16 cells). A row at a time: channel by channel
// along the row where its cells are adjacent (channels first), else cell
// by cell (with the channels adjacent, channels-last, a unit-stride loop
// the compiler vectorises without gathers).
template <typename T, typename P>
void add_per_channel(const StridedView<T>& v, const P* values) {
  const Index channels = v.extent()[1], sc = v.strides()[1];
  for_each_view_row(v, [&](T* row, Index cells, Index sw) {
    if (sw == 1) {
      for (Index c = 0; c < channels; ++c) {
        T* x = row + c * sc;
        const P b = values[c];
#pragma omp simd
        for (Index j = 0; j < cells; ++j) x[j] = x[j] + b;
      }
      return;
    }
    if (sc == 1) {  // channels-last: each cell's channels adjacent
      for (Index j = 0; j < cells; ++j) {
        T* x = row + j * sw;
#pragma omp simd
        for (Index c = 0; c < channels; ++c) x[c] = x[c] + values[c];
      }
      return;
    }
    for (Index j = 0; j < cells; ++j) {
      T* x = row + j * sw;
#pragma omp simd
      for (Index c = 0; c < channels; ++c) {
        x[c * sc] = x[c * sc] + values[c];
      }
    }
  });
}

// Up to this many channels, sum_per_channel sums a channels-last row in a
// local array.
inline constexpr Index kRowSumChannels = 64;

// sums[c] += v(n, c, ...) over every cell (a bias gradient), summed in the
// type of sums: each channel's row (its cells along the view's last
// dimension) is summed on its own first, then added: in vector lanes
// where a row's cells are adjacent (channels first), in a local array
// across the cells where their channels are (channels-last, up to
// kRowSumChannels), else cell by cell.

template <typename T, typename P>
void sum_per_channel(const StridedView<const T>& v, P* sums) {
  const Index channels = v.extent()[1], sc = v.strides()[1];
  for_each_view_row(v, [&](const T* row, Index cells, Index sw) {
    if (sw == 1) {
      for (Index c = 0; c < channels; ++c) {
        const T* x = row + c * sc;
        P s = 0;
#pragma omp simd reduction(+ : s)
        for (Index j = 0; j < cells; ++j) s += x[j];
        sums[c] += s;
      }
      return;
    }
    if (sc == 1 && channels <= kRowSumChannels) {
      // Channels-last: each cell's channels adjacent, summed in a local
      // array (which the compiler knows no cell aliases).
      P acc[kRowSumChannels] = {};
      for (Index j = 0; j < cells; ++j) {
        const T* x = row + j * sw;
#pragma omp simd
        for (Index c = 0; c < channels; ++c) acc[c] += x[c];
      }
      for (Index c = 0; c < channels; ++c) sums[c] += acc[c];
      return;
    }
    for (Index j = 0; j < cells; ++j) {
      const T* x = row + j * sw;
#pragma omp simd
      for (Index c = 0; c < channels; ++c) sums[c] += x[c * sc];
    }
  });
}

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_INTERNAL_CELL_WALK_H_
