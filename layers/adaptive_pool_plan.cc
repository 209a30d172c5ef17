#include "layers/adaptive_pool_plan.h"

#include <sstream>

#include "distconv/internal/layer_checks.h"

namespace distconv {

std::string AdaptivePoolPlan::describe() const {
  const size_t ranks = set_ranks.size();
  std::ostringstream out;
  out << "adaptive " << to_string(desc.kind) << " pooling "
      << src_layout.distribution().global_shape() << " -> "
      << dst_layout.distribution().global_shape() << " over " << ranks
      << (ranks == 1 ? " rank" : " ranks");
  return out.str();
}

AdaptivePoolPlan plan_adaptive_pool(const AdaptivePoolDesc& desc,
                                    const Distribution& src, int rank) {
  internal::check_plan_rank(src, rank);
  const Distribution dst = desc.dst_distribution(src);
  AdaptivePoolPlan p{desc, rank,
                     HaloLayout(src).with_storage(StorageOrder::kChannelsLast),
                     HaloLayout(dst).with_storage(StorageOrder::kChannelsLast),
                     src.parts_sharing(rank, {0, 1}), desc.size.volume()};
  return p;
}

}  // namespace distconv
