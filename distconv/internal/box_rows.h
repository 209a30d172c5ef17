// Internal: visit a box of a contiguous row-major array one row (a run
// along the last dimension) at a time. The basis of packing, unpacking,
// scatter and gather on the host.
#ifndef DISTCONV_INTERNAL_BOX_ROWS_H_
#define DISTCONV_INTERNAL_BOX_ROWS_H_

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

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_BOX_ROWS_H_
