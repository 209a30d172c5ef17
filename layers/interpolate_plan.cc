#include "layers/interpolate_plan.h"

#include <sstream>

#include "distconv/internal/layer_checks.h"

namespace distconv {

std::string InterpolatePlan::describe() const {
  const HaloWidths w = src_layout.widths(rank);
  std::ostringstream out;
  out << "linear interpolation " << src_layout.distribution().global_shape()
      << " -> " << dst_layout.distribution().global_shape()
      << ", align_corners "
      << (desc.align_corners == AlignCorners::kYes ? "yes" : "no")
      << ", halos lower " << w.lower << " upper " << w.upper;
  return out.str();
}

InterpolatePlan plan_interpolate(const InterpolateDesc& desc,
                                 const Distribution& src, int rank) {
  internal::check_plan_rank(src, rank);
  const Distribution dst = desc.dst_distribution(src);
  InterpolatePlan p{desc, rank, desc.src_layout(src, dst),
                    HaloLayout(dst).with_storage(StorageOrder::kChannelsLast),
                    {}};
  const Box buffer = p.src_layout.buffer_box(rank);
  const Box out = dst.shard(rank);
  for (int d = 0; d < desc.spatial_dims(); ++d) {
    LocalTaps t;
    const Index in = src.global_shape()[d + 2];
    for (Index o = 0; o < out.extent[d + 2]; ++o) {
      const LinearTap g = desc.tap(d, in, out.lower[d + 2] + o);
      t.i0.push_back(g.i0 - buffer.lower[d + 2]);
      t.i1.push_back(g.i1 - buffer.lower[d + 2]);
      t.w0.push_back(g.w0);
      t.w1.push_back(g.w1);
    }
    p.taps.push_back(std::move(t));
  }
  return p;
}

}  // namespace distconv
