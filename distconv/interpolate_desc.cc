#include "distconv/interpolate_desc.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {

InterpolateDesc InterpolateDesc::of_size(const Shape& size) {
  InterpolateDesc d;
  d.size = size;
  return d;
}

void InterpolateDesc::validate(const Shape& src_shape) const {
  internal::check_resize("linear interpolation", src_shape, size);
  const int k = spatial_dims();
  require(scales.empty() || static_cast<int>(scales.size()) == k,
          ErrorKind::kInvalidArgument, "linear interpolation: ",
          scales.size(), " scales for ", k, " spatial dimensions");
  for (double s : scales) {
    require(std::isfinite(s) && s > 0, ErrorKind::kInvalidArgument,
            "linear interpolation scale ", s, " must be finite and > 0");
  }
}

Shape InterpolateDesc::dst_shape(const Shape& src_shape) const {
  validate(src_shape);
  Shape out = src_shape;
  for (int d = 0; d < spatial_dims(); ++d) out[d + 2] = size[d];
  return out;
}

LinearTap InterpolateDesc::tap(int d, Index in, Index o) const {
  const Index out = size[d];
  double s = 0;
  if (align_corners == AlignCorners::kYes) {
    s = out > 1 ? static_cast<double>(o) * static_cast<double>(in - 1) /
                      static_cast<double>(out - 1)
                : 0.0;
  } else {
    const double r = scales.empty() ? static_cast<double>(in) /
                                          static_cast<double>(out)
                                    : scales[d];
    s = std::max(0.0, (static_cast<double>(o) + 0.5) * r - 0.5);
  }
  LinearTap t;
  t.i0 = std::min<Index>(static_cast<Index>(s), in - 1);
  t.i1 = std::min<Index>(t.i0 + 1, in - 1);
  t.w1 = s - static_cast<double>(t.i0);
  t.w0 = 1.0 - t.w1;
  return t;
}

Distribution InterpolateDesc::dst_distribution(const Distribution& src) const {
  validate(src.global_shape());
  std::vector<BlockPartition> parts;
  for (int d = 0; d < src.ndims(); ++d) {
    parts.push_back(d < 2 ? src.partition(d)
                          : BlockPartition::balanced(
                                size[d - 2], src.partition(d).parts()));
  }
  return Distribution(std::move(parts));
}

HaloLayout InterpolateDesc::src_layout(const Distribution& src,
                                       const Distribution& dst) const {
  validate(src.global_shape());
  const int n = src.ndims();
  std::vector<HaloWidths> widths;
  for (int p = 0; p < src.num_parts(); ++p) {
    const Box in = src.shard(p), out = dst.shard(p);
    HaloWidths w = HaloWidths::none(n);
    if (!out.empty()) {
      for (int d = 2; d < n; ++d) {
        const Index extent = src.global_shape()[d];
        const LinearTap first = tap(d - 2, extent, out.lower[d]);
        const LinearTap last =
            tap(d - 2, extent, out.lower[d] + out.extent[d] - 1);
        w.lower[d] = std::max<Index>(0, in.lower[d] - first.i0);
        w.upper[d] =
            std::max<Index>(0, last.i1 + 1 - (in.lower[d] + in.extent[d]));
      }
    }
    widths.push_back(w);
  }
  return HaloLayout(src, std::move(widths))
      .with_storage(StorageOrder::kChannelsLast);
}

}  // namespace distconv
