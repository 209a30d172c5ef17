// ConvGeometry: the index math of a distributed convolution. Pure: no MPI,
// no kernels. Given a ConvDesc and the global input shape it answers, in
// global coordinates:
//  - which input cells (and how much padding) a box of outputs reads
//    (forward and backward-weights), and which outputs a box of input
//    gradients reads (backward-data): a ConvWindow, which a kernel runs on
//    as one local convolution;
//  - how the outputs are distributed so that output shards line up with
//    the input shards (an output belongs to the part owning the centre of
//    its window), and each part's halo widths;
//  - how a part's box splits into an interior, computable before any halo
//    arrives, and boundary boxes.
//
// One spatial dimension, input extent I, output extent O, stride s, lower
// padding pl, upper padding pu, span = (k - 1) * dilation + 1: output o
// reads inputs [o * s - pl, o * s - pl + span), clipped to [0, I) (the
// rest is padding). With circular padding nothing is clipped: the cells
// [-pl, 0) and [I, I + pu) are halos holding the other end's cells, and
// the local convolutions run without padding there.
//
//   ConvDesc conv = ConvDesc::make(16, 16, {3, 3});
//   conv.padding_lower = conv.padding_upper = {1, 1};
//   ConvGeometry g(conv, {1, 16, 64, 64});
//   g.forward_window(Box{{0, 0, 0, 0}, {1, 16, 32, 64}});
//   // src [0:1, 0:16, 0:33, 0:64), padding lower {1, 1}, upper {0, 1}
#ifndef DISTCONV_CONV_GEOMETRY_H_
#define DISTCONV_CONV_GEOMETRY_H_

#include <vector>

#include "distconv/box.h"
#include "distconv/conv_desc.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/shape.h"

namespace distconv {

// One local convolution: `dst` computed from `src` (both inside their
// global tensors) with the given padding per spatial dimension, so that
// (src + padding_lower + padding_upper - span) / stride + 1 == dst exactly.
// Empty when there is nothing to compute; `src` alone may be empty when the
// outputs read padding only.
struct ConvWindow {
  Box src;
  Box dst;
  Shape padding_lower;
  Shape padding_upper;

  friend bool operator==(const ConvWindow& a, const ConvWindow& b) {
    return a.src == b.src && a.dst == b.dst &&
           a.padding_lower == b.padding_lower &&
           a.padding_upper == b.padding_upper;
  }
};

// A box split for overlap: `interior` needs no halo; `boundary` boxes cover
// the rest, disjoint (none of them empty). They are peeled one spatial
// dimension at a time, outermost first: `core` is the box narrowed in the
// outermost spatial dimension only (the interior plus the boundary boxes
// of the inner dimensions), full in the others.
struct BoxSplit {
  Box interior;
  std::vector<Box> boundary;
  Box core;
};

// How an input distribution splits channels (grid dimension 1):
//  - kNone: one part holds every channel;
//  - kWholeGroups: every part's channels are whole groups (a depthwise
//    convolution's single channels included), so each part convolves its
//    own groups and the output's parts hold the same groups: no channel
//    communication;
//  - kInsideGroups: a group is cut (groups == 1 only): channel and filter
//    parallelism, the output's filters balanced over the same parts.
enum class ChannelSplit { kNone, kWholeGroups, kInsideGroups };

class ConvGeometry {
 public:
  // Validates (desc.validate); throws distconv::Error.
  ConvGeometry(const ConvDesc& desc, const Shape& src_shape);

  const ConvDesc& desc() const { return desc_; }
  const Shape& src_shape() const { return src_shape_; }
  const Shape& dst_shape() const { return dst_shape_; }

  // The inputs that outputs `dst` read (all channels). Forward and
  // backward-weights run on it.
  ConvWindow forward_window(const Box& dst) const;
  // For input gradients over `src`: the outputs that contribute, and the
  // sub-box of `src` that receives contributions (window.src; the rest of
  // `src` gets zero). Empty when no output reads `src`.
  ConvWindow backward_data_window(const Box& src) const;

  // What `src`'s channel partition is; throws kUnsupported when it cuts a
  // group of a grouped convolution.
  ChannelSplit channel_split(const Distribution& src) const;
  // The output distribution lined up with `src` (same grid): samples and
  // spatial cuts lined up, channels as channel_split() says.
  Distribution dst_distribution(const Distribution& src) const;
  // An input distribution lined up with the output distribution `dst`
  // (same grid): each part's inputs start at the centre of its first
  // output's window, so that dst_distribution(src_distribution(dst)) ==
  // dst unless padding or clamping at the edges moves a cut (transposed
  // convolutions work with any input distribution; this one keeps their
  // halos small). Channels as in dst_distribution, the other way round.
  Distribution src_distribution(const Distribution& dst) const;
  // Per-part halos of the input: each part's buffer covers the window of
  // its output shard (of every output channel, so that the parts of one
  // channel group have the same halos). Forward halo exchange fills them,
  // past the ends of a circular dimension from the other end.
  HaloLayout src_layout(const Distribution& src, const Distribution& dst,
                        StorageOrder order) const;
  // Per-part halos of the output gradient: each part's buffer covers the
  // outputs its input-gradient cells (diff_src_box, of every input
  // channel) read.
  HaloLayout diff_dst_layout(const Distribution& src, const Distribution& dst,
                             StorageOrder order) const;
  // The input-gradient cells part `part` of `src` computes: its shard and,
  // where the padding is circular, the padding cells past the ends of the
  // input it touches (a shard with samples and cells at the lower end gets
  // [-padding_lower, 0), at the upper end [I, I + padding_upper)). Their
  // gradients belong to the cells at the other end: a reverse halo
  // exchange of diff_src_layout() adds them there.
  Box diff_src_box(const Distribution& src, int part) const;
  // The input gradient's halos: diff_src_box() around each shard (none
  // without circular padding), periodic where the padding is circular.
  HaloLayout diff_src_layout(const Distribution& src,
                             StorageOrder order) const;
  // Periodic in the spatial dimensions whose padding is circular, open
  // elsewhere: the boundaries of src_layout() and diff_src_layout().
  std::vector<Boundary> src_boundaries() const;

  // Forward: outputs in `dst` whose window lies inside `src_shard` (or in
  // padding) form the interior.
  BoxSplit split_forward(const Box& dst, const Box& src_shard) const;
  // Backward-data: inputs in `src` whose contributing outputs all lie in
  // `dst_shard` form the interior.
  BoxSplit split_backward_data(const Box& src, const Box& dst_shard) const;

 private:
  // Each output channel reads only its own input channel (groups == C ==
  // F: depthwise convolutions and pooling windows): windows keep the
  // channel range of their box, and distributions may split channels.
  bool channelwise() const;
  // The channel partition of the other side (`channels` of them) for a
  // distribution `d` of this side: the same groups for kWholeGroups,
  // balanced over as many parts for kInsideGroups.
  BlockPartition channel_partition(const Distribution& d,
                                   Index channels) const;

  ConvDesc desc_;
  Shape src_shape_;
  Shape dst_shape_;
};

}  // namespace distconv

#endif  // DISTCONV_CONV_GEOMETRY_H_
