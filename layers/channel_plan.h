// Not API (namespace internal; a public header because ConvPlan holds one):
// the index math of the convolution's channel and filter
// parallelism (pure, no MPI; see convolution.h for the schemes).
//
// The P ranks of a channel group (the ranks differing only in their
// channel coordinate r) form a pc x pf grid: member r = i * pf + j reads
// input-channel block i (the input's channel parts i * pf .. i * pf + pf -
// 1, gathered over its row) and computes filter block j (the filters
// balanced over pf); the partial sums of block j are reduce-scattered over
// the pc members of its column in pieces (block j balanced over pc), and
// piece i belongs to member j * pc + i. Stationary output is pc = 1,
// stationary input pf = 1, stationary weights anything between.
//
//   ChannelPlan c = channel_plan(geometry, src, options);   // e.g. 2 x 3
//   Distribution dst = with_filter_pieces(geometry.dst_distribution(src),
//                                         c, desc.out_channels);
//   c.piece_owner(r);   // who receives the piece member r makes
#ifndef DISTCONV_LAYERS_CHANNEL_PLAN_H_
#define DISTCONV_LAYERS_CHANNEL_PLAN_H_

#include "distconv/conv_geometry.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "layers/conv_options.h"

namespace distconv::internal {

struct ChannelPlan {
  bool split = false;  // false: each rank convolves its own channels
  int pc = 1, pf = 1;

  // Pieces travel between members (both blocks are > 1).
  bool transposed() const { return pc > 1 && pf > 1; }
  // The member that owns the piece member r makes, and the one that
  // makes the piece member r owns (inverse permutations of 0 .. P-1).
  int piece_owner(int r) const { return (r % pf) * pc + r / pf; }
  int piece_maker(int r) const { return (r % pc) * pf + r / pc; }

  friend bool operator==(const ChannelPlan &a, const ChannelPlan &b) {
    return a.split == b.split && a.pc == b.pc && a.pf == b.pf;
  }
};

// From the input distribution and the options: no split unless the
// channel parts cut a group (ConvGeometry::channel_split; kUnsupported
// where a grouped convolution's group is cut); the scheme's pc x pf, with
// channel_blocks checked (kInvalidArgument unless it divides P).
ChannelPlan channel_plan(const ConvGeometry &g, const Distribution &src,
                         const ConvolutionOptions &options);

// `d` with the output's channel partition under `c`: filter block j's
// pieces, j major (member j * pc + i holds piece i of block j); `d`
// itself when channels are not split.
Distribution with_filter_pieces(const Distribution &d, const ChannelPlan &c,
                                Index filters);

// Parts first .. first + count - 1 of `p`, as a partition of their span.
BlockPartition sub_partition(const BlockPartition &p, int first, int count);

// `layout` with `channels` channels on each rank of a channel group, as a
// channels-last layout over the grid of the ranks sharing a channel
// coordinate (grid extent 1 in channels): the cells and halos of the
// group's members that hold channels. Throws kInvalidArgument (naming
// `what`) if those members have different halos.
HaloLayout full_channel_layout(const HaloLayout &layout, Index channels,
                               const char *what);

// `grid` with extent 1 in channels: the grid of a channel slice.
Shape channel_slice_shape(Shape grid);

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_CHANNEL_PLAN_H_
