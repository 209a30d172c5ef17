// Internal: visit a box of a contiguous row-major array one row (a run
// along the last dimension) at a time. The basis of packing, unpacking,
// scatter and gather on the host.
#ifndef DISTCONV_INTERNAL_BOX_ROWS_H_
#define DISTCONV_INTERNAL_BOX_ROWS_H_

#include <algorithm>

#include "distconv/box.h"
#include "distconv/shape.h"

namespace distconv::internal {

// Calls fn(offset, length) for each row of `box` inside an array of extent
// `extent`, in row-major order; offsets are in elements.
template <typename Fn>
void for_each_row(const Shape& extent, const Box& box, Fn fn) {
  if (box.empty()) return;
  const int n = extent.ndims();
  const Shape strides = row_major_strides(extent);
  // Merge trailing dimensions that the box spans completely, so that
  // contiguous slabs become one long row.
  int last = n - 1;
  Index row = box.extent[last];
  while (last > 0 && box.extent[last] == extent[last] &&
         box.lower[last] == 0) {
    --last;
    row *= box.extent[last];
  }
  Shape i = Shape::filled(n, 0);  // position within the box, dims < last
  while (true) {
    Index offset = 0;
    for (int d = 0; d < n; ++d) {
      offset += (box.lower[d] + (d < last ? i[d] : 0)) * strides[d];
    }
    fn(offset, row);
    int d = last - 1;
    while (d >= 0 && ++i[d] == box.extent[d]) i[d--] = 0;
    if (d < 0) return;
  }
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
const T* combine_box(const T* in, const Shape& extent, const Box& box,
                     T* array, Op op) {
  for_each_row(extent, box, [&](Index off, Index len) {
    T* row = array + off;
    for (Index i = 0; i < len; ++i) row[i] = op(row[i], in[i]);
    in += len;
  });
  return in;
}

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_BOX_ROWS_H_
