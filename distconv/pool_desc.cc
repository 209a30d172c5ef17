#include "distconv/pool_desc.h"

#include "distconv/error.h"

namespace distconv {

PoolDesc PoolDesc::make(PoolKind kind, const Shape& kernel) {
  PoolDesc d;
  d.kind = kind;
  d.kernel = kernel;
  d.stride = kernel;
  d.padding_lower = Shape::filled(kernel.ndims(), 0);
  d.padding_upper = Shape::filled(kernel.ndims(), 0);
  return d;
}

ConvDesc PoolDesc::window_conv(Index channels) const {
  ConvDesc c = ConvDesc::make(channels, channels, kernel);
  c.groups = channels;
  c.stride = stride;
  c.padding_lower = padding_lower;
  c.padding_upper = padding_upper;
  c.padding_mode = padding_mode;
  return c;
}

void PoolDesc::validate(const Shape& src_shape) const {
  const int k = spatial_dims();
  require(k == 2 || k == 3, ErrorKind::kInvalidArgument,
          "pooling has 2 or 3 spatial dimensions, kernel ", kernel, " has ", k);
  for (const Shape* s : {&stride, &padding_lower, &padding_upper}) {
    require(s->ndims() == k, ErrorKind::kShapeMismatch, "pooling kernel ",
            kernel, " has ", k, " spatial dimensions but stride ", stride,
            ", padding ", padding_lower, " / ", padding_upper,
            " do not all have ", k);
  }
  require(src_shape.ndims() == k + 2, ErrorKind::kShapeMismatch,
          "input shape ", src_shape, " does not fit a ", k,
          "D pooling (expected N, C and ", k, " spatial extents)");
  require(src_shape[1] >= 1, ErrorKind::kInvalidArgument, "input shape ",
          src_shape, " must have at least one channel");
  for (int d = 0; d < k; ++d) {
    require(padding_lower[d] < kernel[d] && padding_upper[d] < kernel[d],
            ErrorKind::kInvalidArgument, "pooling padding ", padding_lower,
            " / ", padding_upper, " must be smaller than the kernel ", kernel,
            " (a window of padding only has no value)");
  }
  window_conv(src_shape[1]).validate(src_shape);
}

Shape PoolDesc::dst_shape(const Shape& src_shape) const {
  validate(src_shape);
  return window_conv(src_shape[1]).dst_shape(src_shape);
}

const char* to_string(PoolKind kind) {
  switch (kind) {
    case PoolKind::kMax:
      return "max";
    case PoolKind::kAverageIncludePadding:
      return "average (padding included)";
    case PoolKind::kAverageExcludePadding:
      return "average (padding excluded)";
  }
  return "unknown";
}

}  // namespace distconv
