// BoxSegments: the boxes of a halo exchange's messages in the form the CUDA
// pack kernels (box_pack.h) walk them, computed once when an exchange is
// planned. Pure index math with no CUDA header, so it is built and tested
// everywhere; the kernels call segment_array_index() with the very same code.
//
// Each box of a row-major array becomes one segment: its cells in row-major
// order are consecutive in a packed buffer (from packed_offset), and cell k
// of the segment sits at segment_array_index(s, k) in the array. Trailing
// dimensions the box spans whole are merged into one long row, and outer
// dimensions that are contiguous over each other are merged too, so an
// H-halo of an NCHW tensor is one outer dimension of N*C rows of h*W cells.
//
// Boxes may overlap (the reverse exchange sends one shard cell to several
// peers, whose contributions all come back to it). Accumulating kernels must
// not run two overlapping segments at once, and must add a cell's
// contributions in the boxes' order, as the host does: segments are grouped
// in waves of pairwise disjoint boxes, each box in a later wave than every
// earlier box it overlaps, and run one wave after another.
//
// `width` lets the kernels move `width` elements at once (16-byte loads for
// float): every offset, row and stride is then counted in groups of `width`
// elements. It is the largest power of two up to max_width dividing all of
// them.
//
//   BoxSegments s = make_box_segments(Shape{2, 3, 10, 12}, boxes, 4);
//   for (const BoxSegment& seg : s.segments)
//     for (int64_t k = 0; k < seg.volume; ++k)
//       packed[seg.packed_offset + k] = array[segment_array_index(seg, k)];
#ifndef DISTCONV_HALO_CUDA_BOX_SEGMENTS_H_
#define DISTCONV_HALO_CUDA_BOX_SEGMENTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "distconv/box.h"
#include "distconv/internal/host_device.h"
#include "distconv/shape.h"

namespace distconv {

// Outer dimensions a segment may have after merging (the row is the last).
inline constexpr int kMaxOuterDims = kMaxDims - 1;

// Counts and offsets in units of BoxSegments::width elements.
struct BoxSegment {
  std::int64_t array_offset;   // the box's first cell in the array
  std::int64_t packed_offset;  // where its cells start in the packed buffer
  std::int64_t row;            // cells per contiguous run (> 0)
  std::int64_t volume;         // cells in the box (< 2^31)
  int outer_dims;              // used entries of count and stride
  std::int64_t count[kMaxOuterDims];   // outer extents, outermost first
  std::int64_t stride[kMaxOuterDims];  // their strides in the array
};

struct BoxSegments {
  // One per non-empty box, ordered by wave and within a wave by box.
  std::vector<BoxSegment> segments;
  std::vector<Box> boxes;            // the box of each segment
  // Wave w is segments [wave_begin[w], wave_begin[w + 1]).
  std::vector<std::size_t> wave_begin;
  int width = 1;                     // elements per unit
  std::int64_t packed_volume = 0;    // elements in the packed buffer
  std::int64_t max_volume = 0;       // units in the largest segment
};

// Segments of `boxes` (each inside [0, extent)) packed one after the other in
// the given order, empty boxes taking no room, grouped in waves. max_width: a power of two,
// the most elements the caller's kernels move at once. Throws Error
// (kUnsupported) for a box of 2^31 cells or more.
BoxSegments make_box_segments(const Shape& extent,
                              const std::vector<Box>& boxes, int max_width);

// Where cell `cell` (in [0, s.volume)) of the segment lies in the array.
DISTCONV_HOST_DEVICE inline std::int64_t segment_array_index(
    const BoxSegment& s, std::int64_t cell) {
  // 32-bit division: volume < 2^31 (checked by make_box_segments).
  const std::uint32_t c = static_cast<std::uint32_t>(cell);
  const std::uint32_t row = static_cast<std::uint32_t>(s.row);
  std::uint32_t r = c / row;
  std::int64_t index = s.array_offset + (c - r * row);
  for (int d = s.outer_dims - 1; d > 0; --d) {
    const std::uint32_t n = static_cast<std::uint32_t>(s.count[d]);
    const std::uint32_t q = r / n;
    index += static_cast<std::int64_t>(r - q * n) * s.stride[d];
    r = q;
  }
  if (s.outer_dims > 0) index += static_cast<std::int64_t>(r) * s.stride[0];
  return index;
}

}  // namespace distconv

#endif  // DISTCONV_HALO_CUDA_BOX_SEGMENTS_H_
