#include "halo/cuda/box_segments.h"

#include <algorithm>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/pointwise_dims.h"

namespace distconv {
namespace {

BoxSegment segment_of(const Shape& strides, const Box& box,
                      std::int64_t packed_offset) {
  BoxSegment s{};
  s.packed_offset = packed_offset;
  s.volume = box.volume();
  for (int d = 0; d < box.ndims(); ++d) {
    s.array_offset += box.lower[d] * strides[d];
  }
  // The box's walk (distconv/internal/pointwise_dims.h): dimensions of one
  // cell dropped, those contiguous over the next merged. Its innermost
  // dimension is the row where contiguous (trailing dimensions the box
  // spans whole joined to it), else the rows are single cells. At most
  // kMaxOuterDims remain outside the row: all of a box's dimensions remain
  // only where the last is one cell, and then that one is dropped.
  const internal::PointwiseDims<1> walk =
      internal::pointwise_dims<1>(box.extent, {strides});
  const int inner = walk.count - 1;
  const bool contiguous = walk.stride[0][inner] == 1;
  s.row = contiguous ? walk.extent[inner] : 1;
  s.outer_dims = contiguous ? inner : walk.count;
  for (int d = 0; d < s.outer_dims; ++d) {
    s.count[d] = walk.extent[d];
    s.stride[d] = walk.stride[0][d];
  }
  return s;
}

bool divides(int w, const BoxSegment& s) {
  bool ok = s.array_offset % w == 0 && s.packed_offset % w == 0 &&
            s.row % w == 0;
  for (int d = 0; d < s.outer_dims; ++d) ok = ok && s.stride[d] % w == 0;
  return ok;
}

// Stable-sorts segments and boxes by wave and records where waves begin.
void order_by_wave(const std::vector<int>& wave, BoxSegments& out) {
  std::vector<size_t> order(wave.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return wave[a] < wave[b]; });
  std::vector<BoxSegment> segments;
  std::vector<Box> boxes;
  for (size_t i : order) {
    if (segments.empty() || wave[i] != wave[order[segments.size() - 1]]) {
      out.wave_begin.push_back(segments.size());
    }
    segments.push_back(out.segments[i]);
    boxes.push_back(out.boxes[i]);
  }
  out.wave_begin.push_back(segments.size());
  out.segments = std::move(segments);
  out.boxes = std::move(boxes);
}

}  // namespace

BoxSegments make_box_segments(const Shape& extent,
                              const std::vector<Box>& boxes, int max_width) {
  require(max_width >= 1 && (max_width & (max_width - 1)) == 0,
          ErrorKind::kInvalidArgument, "max_width ", max_width,
          " is not a power of two");
  const Shape strides = row_major_strides(extent);
  const Box whole{Shape::filled(extent.ndims(), 0), extent};
  BoxSegments out;
  std::vector<int> wave;  // of each segment, in box order
  for (const Box& box : boxes) {
    require(box.ndims() == extent.ndims() && whole.contains(box),
            ErrorKind::kShapeMismatch, "box ", box,
            " is not inside an array of extent ", extent);
    if (box.empty()) continue;
    require(box.volume() < (std::int64_t{1} << 31), ErrorKind::kUnsupported,
            "a box of ", box.volume(),
            " cells exceeds the GPU pack kernels' limit of 2^31 - 1");
    int w = 0;
    for (size_t i = 0; i < out.boxes.size(); ++i) {
      if (!intersect(out.boxes[i], box).empty()) w = std::max(w, wave[i] + 1);
    }
    wave.push_back(w);
    out.boxes.push_back(box);
    out.segments.push_back(segment_of(strides, box, out.packed_volume));
    out.packed_volume += box.volume();
  }
  order_by_wave(wave, out);
  int w = max_width;
  for (const BoxSegment& s : out.segments) {
    while (w > 1 && !divides(w, s)) w /= 2;
  }
  out.width = w;
  for (BoxSegment& s : out.segments) {
    s.array_offset /= w;
    s.packed_offset /= w;
    s.row /= w;
    s.volume /= w;
    for (int d = 0; d < s.outer_dims; ++d) s.stride[d] /= w;
    out.max_volume = std::max(out.max_volume, s.volume);
  }
  return out;
}

}  // namespace distconv
