#include "distconv/adaptive_pool_desc.h"

#include <utility>
#include <vector>

#include "distconv/error.h"

namespace distconv {

const char* to_string(AdaptivePoolKind kind) {
  return kind == AdaptivePoolKind::kMax ? "max" : "average";
}

void AdaptivePoolDesc::validate(const Shape& src_shape) const {
  const int k = spatial_dims();
  require(kind == AdaptivePoolKind::kAverage || kind == AdaptivePoolKind::kMax,
          ErrorKind::kInvalidArgument, "unknown AdaptivePoolKind value ",
          static_cast<int>(kind));
  require(k >= 1 && k <= 3, ErrorKind::kInvalidArgument,
          "adaptive pooling has 1 to 3 spatial dimensions, size ", size,
          " has ", k);
  require(src_shape.ndims() == k + 2, ErrorKind::kShapeMismatch,
          "input shape ", src_shape, " does not fit output size ", size,
          " (expected N, C and ", k, " spatial extents)");
  require(src_shape[0] >= 0 && src_shape[1] >= 0, ErrorKind::kInvalidArgument,
          "input shape ", src_shape, " must be >= 0 in N and C");
  for (int d = 0; d < k; ++d) {
    require(src_shape[d + 2] >= 1 && size[d] >= 1,
            ErrorKind::kInvalidArgument, "adaptive pooling of ", src_shape,
            " to size ", size,
            ": spatial extents must be >= 1 on both sides");
  }
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
