#include "layers/window_plan.h"

#include <utility>

namespace distconv {

bool operator==(const WindowPlan& a, const WindowPlan& b) {
  return a.haloed == b.haloed && a.plain == b.plain && a.window == b.window &&
         a.haloed_local == b.haloed_local && a.plain_local == b.plain_local &&
         a.zero_first == b.zero_first;
}

WindowPlan plan_window(const ConvGeometry& geometry, const HaloLayout& haloed,
                       const HaloLayout& plain, int rank) {
  WindowPlan w{haloed, plain, geometry.forward_window(plain.shard(rank)),
               Box(),  Box(), true};
  const Box& buffer = haloed.buffer_box(rank);
  w.haloed_local = w.window.src.shifted(-buffer.lower);
  w.plain_local = w.window.dst.shifted(-plain.buffer_box(rank).lower);
  w.zero_first = !w.has_kernel() || w.window.src != buffer;
  return w;
}

bool operator==(const WindowPiece& a, const WindowPiece& b) {
  return a.window == b.window && a.reads_frame == b.reads_frame &&
         a.in_local == b.in_local && a.out_local == b.out_local;
}

bool operator==(const WindowFrames& a, const WindowFrames& b) {
  return static_cast<const FrameBoxes&>(a) ==
             static_cast<const FrameBoxes&>(b) &&
         a.pieces == b.pieces && a.plain_rest == b.plain_rest;
}

WindowFrames plan_frames(const ConvGeometry& geometry, const WindowPlan& w,
                         int rank) {
  const Box shard = w.haloed.shard(rank);
  const Shape frame_origin = w.haloed.buffer_box(rank).lower;
  const Shape plain_origin = w.plain.buffer_box(rank).lower;
  auto piece = [&](const Box& dst_box, bool reads_frame) {
    WindowPiece c;
    c.window = geometry.forward_window(dst_box);
    c.reads_frame = reads_frame;
    c.in_local =
        c.window.src.shifted(-(reads_frame ? frame_origin : shard.lower));
    c.out_local = c.window.dst.shifted(-plain_origin);
    return c;
  };
  auto computes = [](const WindowPiece& c) {
    return !c.window.dst.empty() && !c.window.src.empty();
  };
  std::vector<WindowPiece> pieces;
  std::vector<Box> boundary_reads;  // global
  Box interior_read{shard.lower, Shape::filled(shard.ndims(), 0)};
  if (w.has_kernel()) {
    const BoxSplit split = geometry.split_forward(w.window.dst, shard);
    WindowPiece core = piece(split.interior, false);
    if (computes(core)) {
      interior_read = core.window.src;
      pieces.push_back(std::move(core));
    }
    for (const Box& b : split.boundary) {
      WindowPiece edge = piece(b, true);
      if (!computes(edge)) continue;
      boundary_reads.push_back(edge.window.src);
      pieces.push_back(std::move(edge));
    }
  }
  WindowFrames f{
      plan_frame_boxes(w.haloed, rank, boundary_reads, interior_read),
      std::move(pieces),
      {}};
  std::vector<Box> rest;
  if (!w.window.dst.empty()) rest.push_back(w.window.dst);
  for (const WindowPiece& c : f.pieces) {
    std::vector<Box> next;
    for (const Box& r : rest) {
      for (const Box& left : subtract(r, c.window.dst)) next.push_back(left);
    }
    rest = std::move(next);
  }
  for (const Box& r : rest) f.plain_rest.push_back(r.shifted(-plain_origin));
  return f;
}

}  // namespace distconv
