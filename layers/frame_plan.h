// FrameBoxes: the bookkeeping of a layer that reads (or writes) a haloed
// tensor in place (ConvInput::kInPlace): the caller's shard, no halos,
// and a frame tensor of the haloed layout of which only the edges are
// used. The pieces of the rank's outputs whose inputs lie in the shard
// (the interior) read the shard itself; the others (boundary pieces) read
// the frame, whose halos the exchange fills and whose shard cells are
// copied from the shard. Window layers (layers/window_plan.h) and linear
// interpolation (layers/interpolate_plan.h) add their pieces to it.
//
//   FrameBoxes f = plan_frame_boxes(haloed, rank, boundary_reads,
//                                   interior_read);
//   f.frame_edges;   // the shard cells copied into the frame
#ifndef DISTCONV_LAYERS_FRAME_PLAN_H_
#define DISTCONV_LAYERS_FRAME_PLAN_H_

#include <vector>

#include "distconv/box.h"
#include "distconv/halo_layout.h"

namespace distconv {

struct FrameBoxes {
  HaloLayout shard;  // the haloed side's shards, no halos, same storage
  // In the frame's local coordinates: the shard cells the boundary pieces
  // read or the exchange sends, disjoint (copied from the shard into the
  // frame before a forward exchange; added from the frame into the shard
  // after a reverse one).
  std::vector<Box> frame_edges;
  // In the frame's local coordinates: what a pass accumulating into the
  // frame zeroes first (the boundary pieces' inputs, the halos, the edges;
  // the boxes may overlap).
  std::vector<Box> frame_zero;
  // In the shard's local coordinates: the cells the interior piece does
  // not read (zeroed in a gradient the interior overwrites).
  std::vector<Box> shard_rest;
  Shape frame_to_shard;  // frame-local + frame_to_shard = shard-local
  friend bool operator==(const FrameBoxes& a, const FrameBoxes& b);
};

// Part `rank`'s boxes on the haloed layout `frame`, given the global
// boxes the boundary pieces read and the one the interior piece reads
// (empty, or of no dimensions, without one).
FrameBoxes plan_frame_boxes(const HaloLayout& frame, int rank,
                            const std::vector<Box>& boundary_reads,
                            const Box& interior_read);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_FRAME_PLAN_H_
