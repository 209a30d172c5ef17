// HaloPlan: which boxes one part sends to and receives from which other part
// in a halo exchange. Pure index math (no MPI), testable on its own.
//
// Every halo cell is fetched directly from the part that owns it, in one
// message per (owner, periodic wrap): edges and corners of multi-dimensional
// splits arrive as direct diagonal messages, and a halo wider than the
// neighbour's shard is filled from parts further away (multi-hop) without
// any forwarding. Halo cells past an open boundary are not in any message.
//
//   HaloLayout layout(Distribution({1, 1, 8, 8}, {1, 1, 2, 2}),
//                     HaloWidths::symmetric({0, 0, 1, 1}));
//   HaloPlan plan = make_halo_plan(layout, /*part=*/0);
//   // plan.recvs: from part 1 (W-neighbour) a 4x1 column, from part 2
//   // (H-neighbour) a 1x4 row, from part 3 the 1x1 corner.
//
// The forward exchange copies each send box of the sender into the matching
// receive box of the receiver; the reverse exchange moves receive boxes back
// into send boxes and accumulates there (its adjoint).
#ifndef DISTCONV_HALO_HALO_PLAN_H_
#define DISTCONV_HALO_HALO_PLAN_H_

#include <vector>

#include "distconv/box.h"
#include "distconv/halo_layout.h"

namespace distconv {

struct HaloMessage {
  int peer;   // the other part (its rank in the grid communicator)
  int tag;    // periodic wrap, in [0, 3^ndims): tells apart several
              // messages between the same pair of parts
  Box local;  // the cells, in this part's local buffer coordinates

  friend bool operator==(const HaloMessage& a, const HaloMessage& b) {
    return a.peer == b.peer && a.tag == b.tag && a.local == b.local;
  }
};

struct HaloPlan {
  int part = 0;
  std::vector<HaloMessage> sends;  // shard cells sent to peers' halos
  std::vector<HaloMessage> recvs;  // halo cells received from owners
  Index send_volume() const;       // cells in all send boxes
  Index recv_volume() const;       // cells in all receive boxes
};

// The plan of one part, ordered by (peer, tag). Every part computes the same
// messages for a pair: a send of p to r equals a receive of r from p.
HaloPlan make_halo_plan(const HaloLayout& layout, int part);
// Only the receives of make_halo_plan(layout, part) (same order): cheap,
// since it looks at `part`'s own buffer only, where the sends look at every
// part's (the performance model evaluates large grids this way).
std::vector<HaloMessage> halo_receives(const HaloLayout& layout, int part);

// Where each message starts when `messages` are packed one after the other
// into one buffer (in elements); the last entry is the buffer's size.
std::vector<Index> packed_offsets(const std::vector<HaloMessage>& messages);
// The messages' boxes in the layout's storage order, i.e. as boxes of the
// local buffer seen as a row-major array of layout.storage_shape(part).
std::vector<Box> storage_boxes(const HaloLayout& layout,
                               const std::vector<HaloMessage>& messages);

}  // namespace distconv

#endif  // DISTCONV_HALO_HALO_PLAN_H_
