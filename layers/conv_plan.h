// ConvPlan: everything one rank of a distributed convolution does, as a
// value. plan_convolution() derives it from the description, the input
// distribution (its grid shape included), the options and a rank, without
// MPI, so it runs anywhere: in the layer (Convolution<T> executes it), in
// tests without mpirun, and in the performance model, which costs a
// network from these same plans.
//
//   ConvDesc desc = ConvDesc::make(16, 16, {3, 3});
//   desc.padding_lower = desc.padding_upper = {1, 1};
//   Distribution src(Shape{1, 16, 1024, 1024}, Shape{1, 2, 2, 1});
//   ConvPlan plan = plan_convolution(desc, src, /*rank=*/3);
//   plan.src_layout;          // the input's halos on rank 3
//   plan.channels.pc;         // the channel group as pc x pf
//   plan.forward_early;       // the pieces run while halos travel
//   plan.describe();          // one line per piece
//
// What it holds: the layouts of the four tensors; where the passes read
// the input and output gradient (buffers with halos, or the caller's
// shards in place with frames for the edges); with channel
// parallelism, the channel group's grid (pc x pf), the layouts of the
// full-channel tensors the collectives fill, and which members exchange;
// the buffers each pass reads and writes; the weight and bias blocks this
// rank holds; and the pieces of each pass (interior first while halos
// travel, the boundary after), each with the local convolution it runs.
#ifndef DISTCONV_LAYERS_CONV_PLAN_H_
#define DISTCONV_LAYERS_CONV_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "distconv/box.h"
#include "distconv/conv_desc.h"
#include "distconv/conv_geometry.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/conv_pass.h"
#include "layers/channel_blocks.h"
#include "layers/conv_kernel_call.h"
#include "layers/conv_options.h"

namespace distconv {

// Where a pass reads or writes: a caller's tensor or one of the layer's
// full-channel tensors. `box`: the global cells the local buffer holds,
// channels included; `strides`: their element strides.
struct ConvBuffer {
  Box box;
  Shape strides;

  static ConvBuffer of(const HaloLayout& layout, int part) {
    return {layout.buffer_box(part), layout.local_strides(part)};
  }
  // `global` in local coordinates, with all of the buffer's channels (a
  // piece always convolves every channel its buffers hold).
  Box local(const Box& global) const;
  // The same cells with the buffer's channels: the box a pass computes.
  Box work(Box global) const;
  Index channels() const { return box.extent[1]; }
  template <typename Space = HostSpace, typename T>
  StridedView<T, Space> view(T* data, const Box& local_box) const {
    return StridedView<T, Space>(data, box.extent, strides)
        .subview(local_box);
  }
  friend bool operator==(const ConvBuffer& a, const ConvBuffer& b) {
    return a.box == b.box && a.strides == b.strides;
  }
};

// One local convolution of a pass: a ConvGeometry window and its kernel,
// with the window's boxes in the local coordinates of the buffers it reads
// and writes.
struct ConvPiece {
  std::string label;
  Box box;            // global: the outputs (forward, weights) or input
                      // gradients (data) this piece computes
  ConvWindow window;  // global coordinates
  Box in_local;       // forward / weights: x; backward-data: dy
  Box out_local;      // forward / weights: y or dy; data: dx
  Box target_local;   // backward-data: the dx box this piece owns
  bool zero_first = false;  // backward-data: target larger than the window
  std::optional<ConvKernelCall> kernel;  // none: nothing reads the input
};
bool operator==(const ConvPiece& a, const ConvPiece& b);
// A piece's line of a description: "label box: kernel\n".
std::string describe_piece(const ConvPiece& p, const std::string& kernel);

// A tensor with a whole channel (or filter) block of the cells of a
// channel slice, and the collective moving its parts between the members
// that hold them: allgather (x, dy) or reduce-scatter (y, dx).
struct ConvChannelTensor {
  HaloLayout layout;     // over the slice grid (extent 1 in channels)
  BlockPartition block;  // the block's channels, as the members' parts
  int members_dim = 1;   // members along this dimension of pc x pf
                         // exchange it: 1 a row, 0 a column
  friend bool operator==(const ConvChannelTensor& a,
                         const ConvChannelTensor& b) {
    return a.layout == b.layout && a.block == b.block &&
           a.members_dim == b.members_dim;
  }
};

struct ConvPlan {
  ConvGeometry geometry;
  int rank = 0;  // the part of the input distribution this plan is for
  ConvOverlap overlap = ConvOverlap::kInteriorFirst;
  // Where the passes read x and dy: ConvInput::kInPlace where the options
  // ask for it and channels are not split, else kHaloBuffer.
  ConvInput input = ConvInput::kHaloBuffer;
  HaloTransport transport = HaloTransport::kDefault;  // options.halo's
  // How the kernels choose (options.cpu.search; every rank alike).
  ConvImplSearch search = ConvImplSearch::kHeuristic;
  ChannelBlocks channels;
  Distribution dst;  // lined up with the input's distribution
  HaloLayout src_layout, dst_layout, diff_dst_layout, diff_src_layout;
  // Circular padding only: the input gradient with halos at the periodic
  // ends (ConvGeometry::diff_src_layout), where backward-data computes the
  // padding cells' gradients; a reverse halo exchange adds them to the
  // cells at the other end, and the shards are copied to diff_src.
  std::optional<HaloLayout> diff_src_folded;

  // Channel parallelism only (channels.split): the grid of the ranks
  // sharing this rank's channel coordinate, this rank's place in it and
  // in the channel group (member = i * pf + j); the full-channel tensors
  // (x, dx when pf > 1; y, dy when pc > 1) and the sizes of the pieces
  // swapped between members (both > 1).
  Shape slice_shape;
  int slice_rank = 0;
  int member = 0;
  std::optional<ConvChannelTensor> x_full, dx_full, y_full, dy_full;
  Index y_piece_size = 0, dy_piece_size = 0;

  // What the passes read and write: the caller's tensors or the above.
  // With ConvInput::kInPlace, x_buf and dy_buf are the frames (tensors of
  // src_layout and diff_dst_layout) and x_shard, dy_shard the caller's
  // shards (plain layouts, channels-last): the early pieces and every
  // backward-weights piece read the shards, the late pieces the frames.
  ConvBuffer x_buf, y_buf, dy_buf, dx_buf;
  ConvBuffer x_shard, dy_shard;
  // kInPlace: the shard cells copied into the frames before each exchange
  // (in the frames' local coordinates): what the late pieces read of the
  // shard and what the halo exchange sends.
  std::vector<Box> x_frame, dy_frame;
  // This rank's block of the weights (F, C / groups, k...) and of the
  // bias (F), in global coordinates.
  Box weights_block, bias_block;

  std::vector<ConvPiece> forward_early, forward_late;
  std::vector<ConvPiece> data_early, data_late;
  // Backward-weights, each piece adding its gradient: one piece over the
  // output shard (kHaloBuffer); with kInPlace the interior (reading the
  // input's shard) and the boundary boxes (reading its frame).
  std::vector<ConvPiece> weights_early, weights_late;

  const ConvDesc& desc() const { return geometry.desc(); }
  // Partial sums over channels: forward adds the bias after the
  // reduce-scatter, backward-weights sums it from the own filters.
  bool sums_partial_outputs() const { return y_full.has_value(); }
  // Channel parallelism: this rank's row i (channel block) and column j
  // (filter block) in the pc x pf channel group.
  int channel_block() const { return member / channels.pf; }
  int filter_block() const { return member % channels.pf; }
  // The elements of a full-channel tensor's local buffer, and of this
  // rank's part of it (its block's channels at every cell of the buffer).
  Index slice_elements(const ConvChannelTensor& t) const;
  Index block_elements(const ConvChannelTensor& t) const;
  // The rank (in the input's grid) of part `slice_part` of this rank's
  // channel slice.
  int slice_part_rank(int slice_part) const;
  // One line for the channel scheme (when channels are split), then one
  // per piece: "forward core [0:1, 0:16, 1:511, 0:1024): 16->16 on
  // 1x16x512x1024".
  std::string describe() const;
  // The channel scheme's line ("" when channels are not split).
  std::string describe_channels() const;
};
bool operator==(const ConvPlan& a, const ConvPlan& b);
inline bool operator!=(const ConvPlan& a, const ConvPlan& b) {
  return !(a == b);
}

// The plan of part `rank` of `src`'s grid. Validates from global
// information (the same distconv::Error for every rank): the description
// against the input shape, channel splits the scheme cannot do, a shared
// src_layout that does not cover the halos needed.
ConvPlan plan_convolution(const ConvDesc& desc, const Distribution& src,
                          int rank, const ConvolutionOptions& options = {});

}  // namespace distconv

#endif  // DISTCONV_LAYERS_CONV_PLAN_H_
