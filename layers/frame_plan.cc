#include "layers/frame_plan.h"

#include "halo/halo_plan.h"

namespace distconv {

bool operator==(const FrameBoxes& a, const FrameBoxes& b) {
  return a.shard == b.shard && a.frame_edges == b.frame_edges &&
         a.frame_zero == b.frame_zero && a.shard_rest == b.shard_rest &&
         a.frame_to_shard == b.frame_to_shard;
}

FrameBoxes plan_frame_boxes(const HaloLayout& frame, int rank,
                            const std::vector<Box>& boundary_reads,
                            const Box& interior_read) {
  FrameBoxes f{
      HaloLayout(frame.distribution()).with_storage(frame.storage_order()),
      {},
      {},
      {},
      Shape()};
  const Box shard = f.shard.shard(rank);
  const Shape frame_origin = frame.buffer_box(rank).lower;
  f.frame_to_shard = frame_origin - shard.lower;
  std::vector<Box> edges;  // global
  for (const Box& r : boundary_reads) {
    edges.push_back(intersect(r, shard));
    f.frame_zero.push_back(r.shifted(-frame_origin));
  }
  const HaloPlan halo = make_halo_plan(frame, rank);
  for (const HaloMessage& m : halo.sends) {
    edges.push_back(m.local.shifted(frame_origin));
  }
  for (const HaloMessage& m : halo.recvs) f.frame_zero.push_back(m.local);
  for (const Box& e : disjoint_union(edges)) {
    f.frame_edges.push_back(e.shifted(-frame_origin));
    f.frame_zero.push_back(f.frame_edges.back());
  }
  const Box read = interior_read.ndims() == 0 || interior_read.empty()
                       ? Box{shard.lower, Shape::filled(shard.ndims(), 0)}
                       : interior_read;
  for (const Box& r : subtract(shard, read)) {
    f.shard_rest.push_back(r.shifted(-shard.lower));
  }
  return f;
}

}  // namespace distconv
