// Internal: a box of a contiguous row-major array in contiguous rows, on
// the one walk of strided boxes (pointwise_dims.h's for_each_run): packing
// the box into consecutive elements, unpacking into it, combining into it.
// The basis of packing, unpacking, scatter and gather on the host.
#ifndef DISTCONV_INTERNAL_BOX_COPY_H_
#define DISTCONV_INTERNAL_BOX_COPY_H_

#include <algorithm>
#include <array>

#include "distconv/box.h"
#include "distconv/internal/pointwise_dims.h"
#include "distconv/shape.h"

namespace distconv::internal {

// Calls fn(offset, length) for each contiguous row of `box` inside an
// array of extent `extent`, in row-major order (rows as long as the box
// allows: trailing dimensions it spans whole join the last); offsets are
// in elements.
template <typename Fn>
void for_each_row(const Shape& extent, const Box& box, Fn fn) {
  if (box.empty()) return;
  const Shape strides = row_major_strides(extent);
  Index base = 0;
  for (int d = 0; d < extent.ndims(); ++d) base += box.lower[d] * strides[d];
  for_each_run<1>(box.extent, {strides},
                  [&](const std::array<Index, 1>& offset, Index length,
                      const std::array<Index, 1>& step) {
                    if (step[0] == 1) {
                      fn(base + offset[0], length);
                      return;
                    }
                    // The box's last extent is 1: a row per element.
                    for (Index i = 0; i < length; ++i) {
                      fn(base + offset[0] + i * step[0], Index{1});
                    }
                  });
}

// Copies `box` of a row-major array of extent `extent` to consecutive
// elements at `out`; returns the end of what was written.
template <typename T>
T* pack_box(const T* array, const Shape& extent, const Box& box, T* out) {
  for_each_row(extent, box, [&](Index off, Index len) {
    out = std::copy(array + off, array + off + len, out);
  });
  return out;
}

// Copies consecutive elements from `in` into `box` of `array`; returns the
// end of what was read.
template <typename T>
const T* unpack_box(const T* in, const Shape& extent, const Box& box,
                    T* array) {
  for_each_row(extent, box, [&](Index off, Index len) {
    std::copy(in, in + len, array + off);
    in += len;
  });
  return in;
}

// Like unpack_box, but each element becomes op(element, incoming).
template <typename T, typename Op>
const T* combine_box(const T* in, const Shape& extent, const Box& box, T* array,
                     Op op) {
  for_each_row(extent, box, [&](Index off, Index len) {
    T* row = array + off;
    for (Index i = 0; i < len; ++i) row[i] = op(row[i], in[i]);
    in += len;
  });
  return in;
}

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_BOX_COPY_H_
