#include "layers/interpolate_plan.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {
namespace {

// Taps [a, b) of `t`, their input indices shifted by `shift`.
LocalTaps slice(const LocalTaps& t, Index a, Index b, Index shift) {
  LocalTaps s;
  for (Index o = a; o < b; ++o) {
    s.i0.push_back(t.i0[o] + shift);
    s.i1.push_back(t.i1[o] + shift);
    s.w0.push_back(t.w0[o]);
    s.w1.push_back(t.w1[o]);
  }
  return s;
}

// The piece of outputs `box` (global) of the plan's output shard; `in` the
// input shard (global).
InterpolatePiece make_piece(const InterpolatePlan& p, const Box& box,
                            const Box& in, bool reads_frame, Box& read) {
  const Box buffer = p.src_layout.buffer_box(p.rank);
  const Box out = p.dst_layout.shard(p.rank);
  InterpolatePiece piece{reads_frame, box.shifted(-out.lower), {}};
  read = Box{in.lower, in.extent};
  for (size_t d = 0; d < p.taps.size(); ++d) {
    const int k = static_cast<int>(d) + 2;
    const Index a = box.lower[k] - out.lower[k];
    const Index b = a + box.extent[k];
    const Index shift = reads_frame ? 0 : buffer.lower[k] - in.lower[k];
    piece.taps.push_back(slice(p.taps[d], a, b, shift));
    const LocalTaps& t = p.taps[d];
    const Index lo = *std::min_element(t.i0.begin() + a, t.i0.begin() + b);
    const Index hi = *std::max_element(t.i1.begin() + a, t.i1.begin() + b);
    read.lower[k] = buffer.lower[k] + lo;
    read.extent[k] = hi + 1 - lo;
  }
  return piece;
}

// The interior: per spatial dimension, the outputs whose taps lie in the
// input shard (a range, the taps being monotone), then the boundary boxes
// around it.
InterpolateFrames plan_frames(const InterpolatePlan& p) {
  const Box buffer = p.src_layout.buffer_box(p.rank);
  const Box in = p.src_layout.shard(p.rank);
  const Box out = p.dst_layout.shard(p.rank);
  Box core = out;
  for (size_t d = 0; d < p.taps.size(); ++d) {
    const int k = static_cast<int>(d) + 2;
    const Index lo = in.lower[k] - buffer.lower[k];
    const Index hi = lo + in.extent[k];
    const LocalTaps& t = p.taps[d];
    auto inside = [&](Index o) {
      return t.i0[o] >= lo && t.i0[o] < hi && t.i1[o] >= lo && t.i1[o] < hi;
    };
    const Index n = out.extent[k];
    Index a = 0;
    while (a < n && !inside(a)) ++a;
    Index b = a;
    while (b < n && inside(b)) ++b;
    core.lower[k] = out.lower[k] + a;
    core.extent[k] = b - a;
  }
  std::vector<InterpolatePiece> pieces;
  std::vector<Box> boundary_reads;
  Box interior_read{in.lower, Shape::filled(in.ndims(), 0)};
  if (!out.empty()) {
    if (!core.empty()) {
      pieces.push_back(make_piece(p, core, in, false, interior_read));
    }
    for (const Box& b : subtract(out, core)) {
      Box read;
      pieces.push_back(make_piece(p, b, in, true, read));
      boundary_reads.push_back(read);
    }
  }
  return {plan_frame_boxes(p.src_layout, p.rank, boundary_reads, interior_read),
          std::move(pieces)};
}

}  // namespace

const HaloLayout& InterpolatePlan::shard_layout() const {
  require(in_place(), ErrorKind::kState,
          "linear interpolation planned with buffers with halos "
          "(ConvInput::kHaloBuffer) has no shard layout: its passes take "
          "src_layout()");
  return frames->shard;
}

std::string InterpolatePlan::describe() const {
  const HaloWidths w = src_layout.widths(rank);
  std::ostringstream out;
  out << "linear interpolation " << src_layout.distribution().global_shape()
      << " -> " << dst_layout.distribution().global_shape()
      << ", align_corners "
      << (desc.align_corners == AlignCorners::kYes ? "yes" : "no")
      << ", halos lower " << w.lower << " upper " << w.upper;
  if (in_place()) {
    out << ", in place";
    const Shape origin = dst_layout.shard(rank).lower;
    for (const InterpolatePiece& piece : frames->pieces) {
      const Box g = piece.out_local.shifted(origin);
      out << "\n  " << (piece.reads_frame ? "boundary" : "interior") << " ["
          << g.lower << " + " << g.extent << ") from the "
          << (piece.reads_frame ? "frame" : "shard");
    }
  }
  return out.str();
}

InterpolatePlan plan_interpolate(const InterpolateDesc& desc,
                                 const Distribution& src, int rank,
                                 ConvInput input) {
  internal::check_plan_rank(src, rank);
  const Distribution dst = desc.dst_distribution(src);
  InterpolatePlan p{desc,
                    rank,
                    desc.src_layout(src, dst),
                    HaloLayout(dst).with_storage(StorageOrder::kChannelsLast),
                    {},
                    input,
                    std::nullopt};
  const Box buffer = p.src_layout.buffer_box(rank);
  const Box out = dst.shard(rank);
  for (int d = 0; d < desc.spatial_dims(); ++d) {
    LocalTaps t;
    const Index in = src.global_shape()[d + 2];
    for (Index o = 0; o < out.extent[d + 2]; ++o) {
      const LinearTap g = desc.tap(d, in, out.lower[d + 2] + o);
      t.i0.push_back(g.i0 - buffer.lower[d + 2]);
      t.i1.push_back(g.i1 - buffer.lower[d + 2]);
      t.w0.push_back(g.w0);
      t.w1.push_back(g.w1);
    }
    p.taps.push_back(std::move(t));
  }
  if (p.in_place()) p.frames = plan_frames(p);
  return p;
}

}  // namespace distconv
