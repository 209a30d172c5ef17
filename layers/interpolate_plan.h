// InterpolatePlan: what one rank of a distributed linear interpolation
// (layers/interpolate.h) does, as a value. plan_interpolate() derives it
// from the description, the input distribution and a rank, without MPI.
//
//   InterpolateDesc d = InterpolateDesc::of_size({64, 64});
//   Distribution src(Shape{1, 8, 16, 16}, Shape{1, 1, 2, 1});
//   InterpolatePlan plan = plan_interpolate(d, src, /*rank=*/1);
//   plan.src_layout;   // rank 1's input buffer: its rows 8..15 and row 7
//   plan.taps[0];      // its output rows' taps, in its buffer's rows
//
// Planned with ConvInput::kInPlace, `frames` splits the output shard into
// the interior, whose taps lie in the input's shard (read there, taps in
// the shard's coordinates), and boundary boxes read from a frame of
// src_layout() (taps in the frame's coordinates), FrameBoxes
// (layers/frame_plan.h) saying which of its cells are used.
#ifndef DISTCONV_LAYERS_INTERPOLATE_PLAN_H_
#define DISTCONV_LAYERS_INTERPOLATE_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/interpolate_desc.h"
#include "halo/halo_options.h"
#include "kernels/local_interpolate.h"
#include "layers/conv_options.h"
#include "layers/frame_plan.h"

namespace distconv {

struct InterpolateOptions {
  HaloSetupOptions halo;  // how halos travel
  // Where the passes read the input and write its gradient: in buffers
  // with halos, or (kInPlace) in the caller's shards with a frame per
  // pass for the edges. Every element type; 16-bit tensors compute on
  // fp32 copies in either mode.
  ConvInput input = ConvInput::kHaloBuffer;
};

// A box of this rank's outputs and the taps it reads with: in the input
// shard's local coordinates (the interior) or the frame's.
struct InterpolatePiece {
  bool reads_frame = false;
  Box out_local;  // in the output shard's local coordinates
  std::vector<LocalTaps> taps;
};

struct InterpolateFrames : FrameBoxes {
  std::vector<InterpolatePiece> pieces;  // the interior first, if any
};

struct InterpolatePlan {
  InterpolateDesc desc;
  int rank = 0;
  // The input (and its gradient): halos covering this rank's taps; the
  // output (and its gradient): balanced spatially, no halos.
  HaloLayout src_layout, dst_layout;
  // Per spatial dimension, the taps of this rank's output shard in the
  // local coordinates of its input buffer.
  std::vector<LocalTaps> taps;
  ConvInput input = ConvInput::kHaloBuffer;
  std::optional<InterpolateFrames> frames;  // kInPlace only

  bool in_place() const { return input == ConvInput::kInPlace; }
  // The input's (and its gradient's) shards, no halos: what the passes
  // planned kInPlace take (src_layout() is the frames').
  const HaloLayout& shard_layout() const;

  // "linear interpolation 1x8x16x16 -> 1x8x64x64, align_corners no, halos
  // lower {0, 0, 1, 0} upper {0, 0, 0, 0}"; in place, a line per piece.
  std::string describe() const;
};

// The plan of part `rank` of `src`'s grid; validates from global
// information (desc.validate).
InterpolatePlan plan_interpolate(const InterpolateDesc& desc,
                                 const Distribution& src, int rank,
                                 ConvInput input = ConvInput::kHaloBuffer);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERPOLATE_PLAN_H_
