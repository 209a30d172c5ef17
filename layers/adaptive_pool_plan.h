// AdaptivePoolPlan: what one rank of a distributed adaptive pooling
// (layers/adaptive_pool.h) does, as a value. plan_adaptive_pool() derives
// it from the description, the input distribution and a rank, without
// MPI.
//
//   AdaptivePoolDesc d{AdaptivePoolKind::kAverage, Shape{1, 1}};
//   Distribution src(Shape{2, 64, 32, 32}, Shape{2, 1, 2, 1});
//   AdaptivePoolPlan plan = plan_adaptive_pool(d, src, /*rank=*/3);
//   plan.set_ranks;    // {2, 3}: the ranks holding rank 3's samples
//   plan.outputs;      // 1 output cell per (sample, channel)
#ifndef DISTCONV_LAYERS_ADAPTIVE_POOL_PLAN_H_
#define DISTCONV_LAYERS_ADAPTIVE_POOL_PLAN_H_

#include <string>
#include <vector>

#include "distconv/adaptive_pool_desc.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"

namespace distconv {

struct AdaptivePoolPlan {
  AdaptivePoolDesc desc;
  int rank = 0;
  // Input and output (and their gradients): channels-last, no halos; the
  // output's spatial dimensions balanced over the parts.
  HaloLayout src_layout, dst_layout;
  // The ranks sharing this rank's sample and channel coordinates: each
  // holds part of every window of their samples and channels, and their
  // partial results are combined over them (ascending, this rank among
  // them).
  std::vector<int> set_ranks;
  Index outputs = 0;  // output cells per (sample, channel)

  bool communicates() const { return set_ranks.size() > 1; }
  // "adaptive average pooling 2x64x32x32 -> 2x64x1x1 over 2 ranks".
  std::string describe() const;
};

AdaptivePoolPlan plan_adaptive_pool(const AdaptivePoolDesc& desc,
                                    const Distribution& src, int rank);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_ADAPTIVE_POOL_PLAN_H_
