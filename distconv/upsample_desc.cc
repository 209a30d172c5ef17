#include "distconv/upsample_desc.h"

#include <limits>
#include <vector>

#include "distconv/error.h"

namespace distconv {

void UpsampleDesc::validate(const Shape& src_shape) const {
  const int k = spatial_dims();
  require(k >= 1 && k <= 3, ErrorKind::kInvalidArgument,
          "upsampling has 1 to 3 spatial dimensions, factors ", factors,
          " have ", k);
  require(src_shape.ndims() == k + 2, ErrorKind::kShapeMismatch,
          "input shape ", src_shape, " does not fit factors ", factors,
          " (expected N, C and ", k, " spatial extents)");
  for (int d = 0; d < src_shape.ndims(); ++d) {
    require(src_shape[d] >= 0, ErrorKind::kInvalidArgument, "input shape ",
            src_shape, " must be >= 0 in every dimension");
  }
  const Index most = std::numeric_limits<Index>::max();
  for (int d = 0; d < k; ++d) {
    require(factors[d] >= 1, ErrorKind::kInvalidArgument,
            "upsampling factors ", factors, " must be >= 1");
    const Index extent = src_shape[d + 2];
    require(extent == 0 || factors[d] <= most / extent,
            ErrorKind::kInvalidArgument, "upsampling ", src_shape, " by ",
            factors, " overflows the index type");
  }
}

Shape UpsampleDesc::dst_shape(const Shape& src_shape) const {
  validate(src_shape);
  Shape out = src_shape;
  for (int d = 0; d < spatial_dims(); ++d) out[d + 2] *= factors[d];
  return out;
}

Distribution UpsampleDesc::dst_distribution(const Distribution& src) const {
  validate(src.global_shape());
  std::vector<BlockPartition> parts;
  for (int d = 0; d < src.ndims(); ++d) {
    const BlockPartition& p = src.partition(d);
    const Index f = d >= 2 ? factors[d - 2] : 1;
    std::vector<Index> sizes;
    for (int i = 0; i < p.parts(); ++i) sizes.push_back(f * p.size(i));
    parts.push_back(BlockPartition::from_sizes(sizes));
  }
  return Distribution(std::move(parts));
}

}  // namespace distconv
