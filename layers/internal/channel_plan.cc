#include "layers/internal/channel_plan.h"

#include <utility>
#include <vector>

#include "distconv/error.h"

namespace distconv::internal {

ChannelBlocks channel_plan(const ConvGeometry &g, const Distribution &src,
                           const ConvolutionOptions &o) {
  ChannelBlocks c;
  if (g.channel_split(src) != ChannelSplit::kInsideGroups) return c;
  c.split = true;
  const int p = static_cast<int>(src.grid_shape()[1]);
  switch (o.channels) {
    case ChannelParallelism::kStationaryOutput:
      c.pf = p;
      break;
    case ChannelParallelism::kStationaryInput:
      c.pc = p;
      break;
    case ChannelParallelism::kStationaryWeights: {
      int pc = o.channel_blocks;
      if (pc == 0) {  // the squarest, fewer channel blocks than filter blocks
        for (int d = 1; d * d <= p; ++d) {
          if (p % d == 0) pc = d;
        }
      }
      require(pc >= 1 && p % pc == 0, ErrorKind::kInvalidArgument,
              "stationary weights: channel_blocks = ", o.channel_blocks,
              " does not divide the grid's ", p, " channel parts");
      c.pc = pc;
      c.pf = p / pc;
      break;
    }
  }
  return c;
}

Distribution with_filter_pieces(const Distribution &d, const ChannelBlocks &c,
                                Index filters) {
  if (!c.split) return d;
  const BlockPartition blocks = BlockPartition::balanced(filters, c.pf);
  std::vector<Index> sizes;
  for (int j = 0; j < c.pf; ++j) {
    const BlockPartition pieces =
        BlockPartition::balanced(blocks.size(j), c.pc);
    for (int i = 0; i < c.pc; ++i) sizes.push_back(pieces.size(i));
  }
  std::vector<BlockPartition> parts;
  for (int k = 0; k < d.ndims(); ++k) parts.push_back(d.partition(k));
  parts[1] = BlockPartition::from_sizes(sizes);
  return Distribution(std::move(parts));
}

BlockPartition sub_partition(const BlockPartition &p, int first, int count) {
  std::vector<Index> sizes;
  for (int k = first; k < first + count; ++k) sizes.push_back(p.size(k));
  return BlockPartition::from_sizes(sizes);
}

HaloLayout full_channel_layout(const HaloLayout &layout, Index channels,
                               const char *what) {
  const Distribution &d = layout.distribution();
  std::vector<BlockPartition> parts;
  std::vector<Boundary> boundaries;
  for (int i = 0; i < d.ndims(); ++i) {
    parts.push_back(i == 1 ? BlockPartition::balanced(channels, 1)
                           : d.partition(i));
    boundaries.push_back(layout.boundary(i));
  }
  const Distribution full(std::move(parts));
  std::vector<HaloWidths> widths(full.num_parts(), HaloWidths::none(d.ndims()));
  for (int q = 0; q < full.num_parts(); ++q) {
    Shape coord = full.part_coord(q);
    bool found = false;
    for (Index c = 0; c < d.grid_shape()[1]; ++c) {
      coord[1] = c;
      const int part = d.part_index(coord);
      if (d.shard(part).extent[1] == 0) continue;
      require(!found || layout.widths(part) == widths[q],
              ErrorKind::kInvalidArgument, "the ", what,
              " layout gives the parts of one channel group different halos "
              "(part ",
              part, ")");
      widths[q] = layout.widths(part);
      found = true;
    }
  }
  return HaloLayout(full, std::move(widths), std::move(boundaries))
      .with_storage(StorageOrder::kChannelsLast);
}

Shape channel_slice_shape(Shape grid) {
  grid[1] = 1;
  return grid;
}

}  // namespace distconv::internal
