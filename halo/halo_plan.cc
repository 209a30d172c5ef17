#include "halo/halo_plan.h"

#include <algorithm>
#include <tuple>

#include "distconv/error.h"

namespace distconv {
namespace {

// One candidate source along one dimension: the owner's part coordinate and
// the periodic wrap s (the cell at x is owned as x - s * extent).
struct Candidate {
  int part;
  int shift;
};

// The parts (and wraps) that own cells of [lo, hi) along dimension d.
std::vector<Candidate> candidates(const HaloLayout& layout, int d, Index lo,
                                  Index hi) {
  const BlockPartition& p = layout.distribution().partition(d);
  const Index g = p.extent();
  std::vector<Candidate> out;
  const bool periodic = layout.boundary(d) == Boundary::kPeriodic;
  for (int s = periodic ? -1 : 0; s <= (periodic ? 1 : 0); ++s) {
    const Index a = std::max<Index>(lo - s * g, 0);
    const Index b = std::min<Index>(hi - s * g, g);
    if (a >= b) continue;
    for (int q = p.owner(a); q <= p.owner(b - 1); ++q) {
      if (p.size(q) > 0) out.push_back({q, s});
    }
  }
  return out;
}

// Calls fn(sender part, tag, box in the sender's global coordinates, wrap
// offset) for every message that part `receiver` receives.
template <typename Fn>
void for_each_source(const HaloLayout& layout, int receiver, Fn fn) {
  const Box buffer = layout.buffer_box(receiver);
  if (buffer.empty()) return;
  const int n = layout.ndims();
  const Distribution& dist = layout.distribution();
  std::vector<std::vector<Candidate>> per_dim(n);
  for (int d = 0; d < n; ++d) {
    per_dim[d] = candidates(layout, d, buffer.lower[d], buffer.upper()[d]);
    if (per_dim[d].empty()) return;
  }
  // Odometer over the Cartesian product of per-dimension candidates.
  std::vector<size_t> pick(n, 0);
  while (true) {
    Shape coord = Shape::filled(n, 0), wrap = Shape::filled(n, 0);
    int tag = 0;
    bool self = true;
    for (int d = n - 1; d >= 0; --d) {
      const Candidate& c = per_dim[d][pick[d]];
      coord[d] = c.part;
      wrap[d] = c.shift * dist.global_shape()[d];
      tag = tag * 3 + (c.shift + 1);
      self = self && c.shift == 0;
    }
    const int sender = dist.part_index(coord);
    if (!(self && sender == receiver)) {
      const Box box = intersect(dist.shard(coord), buffer.shifted(-wrap));
      if (!box.empty()) fn(sender, tag, box, wrap);
    }
    int d = n - 1;
    while (d >= 0 && ++pick[d] == per_dim[d].size()) pick[d--] = 0;
    if (d < 0) break;
  }
}

void sort_messages(std::vector<HaloMessage>& m) {
  std::sort(m.begin(), m.end(), [](const HaloMessage& a, const HaloMessage& b) {
    return std::tie(a.peer, a.tag) < std::tie(b.peer, b.tag);
  });
}

}  // namespace

Index HaloPlan::send_volume() const {
  Index v = 0;
  for (const HaloMessage& m : sends) v += m.local.volume();
  return v;
}

Index HaloPlan::recv_volume() const {
  Index v = 0;
  for (const HaloMessage& m : recvs) v += m.local.volume();
  return v;
}

std::vector<HaloMessage> halo_receives(const HaloLayout& layout, int part) {
  require(part >= 0 && part < layout.num_parts(), ErrorKind::kInvalidArgument,
          "part ", part, " outside [0, ", layout.num_parts(), ")");
  std::vector<HaloMessage> recvs;
  const Shape my_origin = layout.buffer_box(part).lower;
  for_each_source(layout, part,
                  [&](int sender, int tag, const Box& box, const Shape& wrap) {
                    recvs.push_back({sender, tag, box.shifted(wrap - my_origin)});
                  });
  sort_messages(recvs);
  return recvs;
}

HaloPlan make_halo_plan(const HaloLayout& layout, int part) {
  HaloPlan plan;
  plan.part = part;
  plan.recvs = halo_receives(layout, part);
  const Shape my_origin = layout.buffer_box(part).lower;
  for (int r = 0; r < layout.num_parts(); ++r) {
    for_each_source(layout, r,
                    [&](int sender, int tag, const Box& box, const Shape&) {
                      if (sender == part) {
                        plan.sends.push_back(
                            {r, tag, box.shifted(-my_origin)});
                      }
                    });
  }
  sort_messages(plan.sends);
  return plan;
}

std::vector<Index> packed_offsets(const std::vector<HaloMessage>& messages) {
  std::vector<Index> off{0};
  for (const HaloMessage& m : messages) {
    off.push_back(off.back() + m.local.volume());
  }
  return off;
}

std::vector<Box> storage_boxes(const HaloLayout& layout,
                               const std::vector<HaloMessage>& messages) {
  std::vector<Box> boxes;
  for (const HaloMessage& m : messages) {
    boxes.push_back(layout.to_storage(m.local));
  }
  return boxes;
}

}  // namespace distconv
