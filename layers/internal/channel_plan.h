// Internal: the index math of the convolution's channel and filter
// parallelism (pure, no MPI): the ChannelBlocks of a plan
// (layers/channel_blocks.h, which says how the members share the work),
// the output's distribution under it and the layouts of a channel group.
//
//   ChannelBlocks c = channel_plan(geometry, src, options);   // e.g. 2 x 3
//   Distribution dst = with_filter_pieces(geometry.dst_distribution(src),
//                                         c, desc.out_channels);
#ifndef DISTCONV_LAYERS_INTERNAL_CHANNEL_PLAN_H_
#define DISTCONV_LAYERS_INTERNAL_CHANNEL_PLAN_H_

#include "distconv/conv_geometry.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "layers/channel_blocks.h"
#include "layers/conv_options.h"

namespace distconv::internal {

// From the input distribution and the options: no split unless the
// channel parts cut a group (ConvGeometry::channel_split; kUnsupported
// where a grouped convolution's group is cut); the scheme's pc x pf, with
// channel_blocks checked (kInvalidArgument unless it divides P).
ChannelBlocks channel_plan(const ConvGeometry &g, const Distribution &src,
                           const ConvolutionOptions &options);

// `d` with the output's channel partition under `c`: filter block j's
// pieces, j major (member j * pc + i holds piece i of block j); `d`
// itself when channels are not split.
Distribution with_filter_pieces(const Distribution &d, const ChannelBlocks &c,
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

#endif  // DISTCONV_LAYERS_INTERNAL_CHANNEL_PLAN_H_
