#include "layers/window_plan.h"

#include <utility>

#include "halo/halo_plan.h"

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
  return a.shard == b.shard && a.pieces == b.pieces &&
         a.frame_edges == b.frame_edges && a.frame_zero == b.frame_zero &&
         a.shard_rest == b.shard_rest && a.plain_rest == b.plain_rest &&
         a.frame_to_shard == b.frame_to_shard;
}

WindowFrames plan_frames(const ConvGeometry& geometry, const WindowPlan& w,
                         int rank) {
  const HaloLayout& frame = w.haloed;
  WindowFrames f{
      HaloLayout(frame.distribution()).with_storage(frame.storage_order()),
      {},
      {},
      {},
      {},
      {},
      Shape()};
  const Box shard = f.shard.shard(rank);
  const Shape frame_origin = frame.buffer_box(rank).lower;
  const Shape plain_origin = w.plain.buffer_box(rank).lower;
  f.frame_to_shard = frame_origin - shard.lower;
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
  std::vector<Box> edges;  // global
  Box interior_window{shard.lower, Shape::filled(shard.ndims(), 0)};
  if (w.has_kernel()) {
    const BoxSplit split = geometry.split_forward(w.window.dst, shard);
    WindowPiece core = piece(split.interior, false);
    if (computes(core)) {
      interior_window = core.window.src;
      f.pieces.push_back(std::move(core));
    }
    for (const Box& b : split.boundary) {
      WindowPiece edge = piece(b, true);
      if (!computes(edge)) continue;
      edges.push_back(intersect(edge.window.src, shard));
      f.frame_zero.push_back(edge.in_local);
      f.pieces.push_back(std::move(edge));
    }
  }
  const HaloPlan halo = make_halo_plan(frame, rank);
  for (const HaloMessage& m : halo.sends) {
    edges.push_back(m.local.shifted(frame_origin));
  }
  for (const HaloMessage& m : halo.recvs) f.frame_zero.push_back(m.local);
  for (const Box& e : disjoint_union(edges)) {
    f.frame_edges.push_back(e.shifted(-frame_origin));
    f.frame_zero.push_back(f.frame_edges.back());
  }
  for (const Box& r : subtract(shard, interior_window)) {
    f.shard_rest.push_back(r.shifted(-shard.lower));
  }
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
