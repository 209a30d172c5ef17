// WindowPlan: a rank's one window of a layer planned on a ConvGeometry
// without an interior/boundary split: pooling (the geometry of its
// depthwise window convolution) and the transposed convolution (the
// geometry of its adjoint convolution). The geometry's input side carries
// the halos (`haloed`), its output side lines up with the shards
// (`plain`); one local kernel runs over this rank's window.
//
//   WindowPlan w = plan_window(geometry, haloed, plain, rank);
//   w.window.dst;        // this rank's shard of `plain`, global
//   w.haloed_local;      // the cells the kernel reads (or writes) there,
//                        // in the local coordinates of haloed's buffer
#ifndef DISTCONV_LAYERS_WINDOW_PLAN_H_
#define DISTCONV_LAYERS_WINDOW_PLAN_H_

#include <optional>
#include <vector>

#include "distconv/box.h"
#include "distconv/conv_geometry.h"
#include "distconv/halo_layout.h"
#include "halo/halo_options.h"
#include "layers/frame_plan.h"

namespace distconv {

// The options of the layers that run one window on a haloed tensor:
// pooling (whose input carries the halos) and the transposed convolution
// (whose output does).
struct WindowOptions {
  HaloSetupOptions halo;  // how halos travel
  // The haloed tensor's layout (pooling: the input and its gradient; the
  // transposed convolution: the output and its gradient), when a tensor
  // shared with other layers carries wider halos (widest() of their
  // layouts); it must cover the halos this layer needs. Unset: exactly
  // those.
  std::optional<HaloLayout> haloed_layout;
};

struct WindowPlan {
  HaloLayout haloed;  // the geometry's src side, with halos
  HaloLayout plain;   // the geometry's dst side, no halos
  ConvWindow window;  // this rank's, global coordinates
  Box haloed_local;   // window.src in haloed's buffer
  Box plain_local;    // window.dst in plain's buffer
  // Whether haloed's buffer has cells the kernel does not cover (shard
  // cells no window reads, halos past the window, all of it without a
  // kernel): a pass accumulating into it zeroes it first.
  bool zero_first = true;

  // Whether a local kernel runs: the window has outputs and reads inputs.
  bool has_kernel() const { return !window.dst.empty() && !window.src.empty(); }
  // The kernel's description: the geometry's, with the window's padding.
  template <typename Desc>
  Desc local_desc(Desc desc) const {
    desc.padding_lower = window.padding_lower;
    desc.padding_upper = window.padding_upper;
    desc.padding_mode.clear();  // the halos hold what circular padding reads
    return desc;
  }
  friend bool operator==(const WindowPlan& a, const WindowPlan& b);
  friend bool operator!=(const WindowPlan& a, const WindowPlan& b) {
    return !(a == b);
  }
};

// Part `rank`'s window: the geometry's forward window of plain's shard.
WindowPlan plan_window(const ConvGeometry& geometry, const HaloLayout& haloed,
                       const HaloLayout& plain, int rank);

// Reading (or writing) the haloed side in place (ConvInput::kInPlace): the
// caller's shards, no halos, and a frame of the haloed layout used at the
// edges only (FrameBoxes, layers/frame_plan.h). The window's outputs split into
// the interior, whose windows lie in the shard, and boundary boxes, whose
// windows reach into the halos (ConvGeometry::split_forward); one local kernel
// per piece.
struct WindowPiece {
  ConvWindow window;         // global coordinates
  bool reads_frame = false;  // a boundary box (else the interior)
  Box in_local;              // window.src in the shard's buffer, or the frame's
  Box out_local;             // window.dst in plain's buffer
  friend bool operator==(const WindowPiece& a, const WindowPiece& b);
};

struct WindowFrames : FrameBoxes {
  // The interior first where it has outputs and inputs.
  std::vector<WindowPiece> pieces;
  // In plain's local coordinates: the window's outputs no piece computes
  // (they read padding only), which a pass writing them zeroes.
  std::vector<Box> plain_rest;

  // The boxes of the pieces reading the frame, or the others.
  template <typename Fn>
  void for_pieces(bool reading_frame, Fn fn) const {
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i].reads_frame == reading_frame) fn(i, pieces[i]);
    }
  }
  friend bool operator==(const WindowFrames& a, const WindowFrames& b);
};

// Part `rank`'s frames and pieces for the window `w` on `geometry`.
WindowFrames plan_frames(const ConvGeometry& geometry, const WindowPlan& w,
                         int rank);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_WINDOW_PLAN_H_
