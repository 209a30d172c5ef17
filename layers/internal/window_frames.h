// Internal: the host-memory steps of a layer planned to read (or write)
// its haloed tensor in place (FrameBoxes, layers/frame_plan.h): pooling's
// passes (layers/internal/pooling_impl.h), the transposed convolution's
// (layers/internal/deconvolution_impl.h) and linear interpolation's
// (layers/interpolate.cc).
//
//   Before a forward exchange of a frame:  fill_edges(f, shard, frame);
//   Before pieces add into a frame:        zero_frame(f, frame);
//   Window pieces that overwrite:          add_boundary_pieces(f, ...);
//   After the reverse exchange:            zero_rest(f, shard);
//                                          add_edges(f, frame, shard);
#ifndef DISTCONV_LAYERS_INTERNAL_WINDOW_FRAMES_H_
#define DISTCONV_LAYERS_INTERNAL_WINDOW_FRAMES_H_

#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "distconv/strided_view.h"
#include "layers/internal/pointwise.h"
#include "layers/window_plan.h"

namespace distconv::internal {

// Throws kInvalidArgument unless a pass of `layer` ("pooling") was called
// the way the layer was planned: with frames exactly when planned with
// ConvInput::kInPlace (called in a pass's checks, on every rank together).
inline void check_frames(bool planned_in_place, bool with_frames,
                         const char* layer) {
  if (with_frames) {
    require(planned_in_place, ErrorKind::kInvalidArgument, "the ", layer,
            " was planned with buffers with halos (ConvInput::kHaloBuffer); "
            "the passes take frames only when planned with "
            "ConvInput::kInPlace");
  } else {
    require(!planned_in_place, ErrorKind::kInvalidArgument, "the ", layer,
            " was planned to read in place (ConvInput::kInPlace): pass the "
            "shards and their frames");
  }
}

// to += from, element for element (views of one extent).
template <typename T>
void add(const StridedView<const T>& from, const StridedView<T>& to) {
  transform([](T a, T b) { return T(a + b); }, to, StridedView<const T>(to),
            from);
}

// The frame's edges = the shard's cells there.
template <typename T>
void fill_edges(const FrameBoxes& f, const DistTensor<T>& shard,
                DistTensor<T>& frame) {
  for (const Box& e : f.frame_edges) {
    copy_view<T>(shard.buffer().subview(e.shifted(f.frame_to_shard)),
                 frame.view(e));
  }
}

// Zero where boundary pieces add and the reverse exchange sends and
// receives.
template <typename T>
void zero_frame(const FrameBoxes& f, DistTensor<T>& frame) {
  for (const Box& z : f.frame_zero) zero(frame.view(z));
}

// Zero the shard's cells no interior piece wrote.
template <typename T>
void zero_rest(const FrameBoxes& f, DistTensor<T>& shard) {
  for (const Box& r : f.shard_rest) zero(shard.view(r));
}

// The shard's edge cells += the frame's there (after the reverse exchange
// summed the neighbours' contributions into them).
template <typename T>
void add_edges(const FrameBoxes& f, DistTensor<T>& frame,
               DistTensor<T>& shard) {
  for (const Box& e : f.frame_edges) {
    add(StridedView<const T>(frame.view(e)),
        shard.view(e.shifted(f.frame_to_shard)));
  }
}

// A dense channels-last view of `extent` on `scratch` (grown to fit).
template <typename T>
StridedView<T> scratch_view(std::vector<T>& scratch, const Shape& extent) {
  if (scratch.size() < static_cast<size_t>(extent.volume())) {
    scratch.resize(static_cast<size_t>(extent.volume()));
  }
  return StridedView<T>(scratch.data(), extent,
                        dense_strides(extent, StorageOrder::kChannelsLast));
}

// The boundary pieces' results summed into the frame, zeroed first: each
// piece's write(i, piece, part) overwrites `part`, a dense view of its
// input box on `scratch`, which is then added into the frame there (the
// windows of neighbouring pieces overlap).
template <typename T, typename Write>
void add_boundary_pieces(const WindowFrames& f, std::vector<T>& scratch,
                         DistTensor<T>& frame, Write write) {
  zero_frame(f, frame);
  f.for_pieces(true, [&](size_t i, const WindowPiece& p) {
    const StridedView<T> part = scratch_view(scratch, p.window.src.extent);
    write(i, p, part);
    add(StridedView<const T>(part), frame.view(p.in_local));
  });
}

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_WINDOW_FRAMES_H_
