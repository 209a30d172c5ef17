#include "distconv/adaptive_pool_desc.h"

#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {

const char* to_string(AdaptivePoolKind kind) {
  return kind == AdaptivePoolKind::kMax ? "max" : "average";
}

void AdaptivePoolDesc::validate(const Shape& src_shape) const {
  require(kind == AdaptivePoolKind::kAverage || kind == AdaptivePoolKind::kMax,
          ErrorKind::kInvalidArgument, "unknown AdaptivePoolKind value ",
          static_cast<int>(kind));
  internal::check_resize("adaptive pooling", src_shape, size);
}

Shape AdaptivePoolDesc::dst_shape(const Shape& src_shape) const {
  validate(src_shape);
  Shape out = src_shape;
  for (int d = 0; d < spatial_dims(); ++d) out[d + 2] = size[d];
  return out;
}

std::pair<Index, Index> AdaptivePoolDesc::window(Index in, Index out,
                                                 Index o) {
  return {o * in / out, ((o + 1) * in + out - 1) / out};
}

Distribution AdaptivePoolDesc::dst_distribution(
    const Distribution& src) const {
  validate(src.global_shape());
  std::vector<BlockPartition> parts;
  for (int d = 0; d < src.ndims(); ++d) {
    parts.push_back(d < 2 ? src.partition(d)
                          : BlockPartition::balanced(
                                size[d - 2], src.partition(d).parts()));
  }
  return Distribution(std::move(parts));
}

}  // namespace distconv
