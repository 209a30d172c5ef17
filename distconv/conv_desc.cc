#include "distconv/conv_desc.h"

#include "distconv/error.h"

namespace distconv {

const char* to_string(PaddingMode mode) {
  return mode == PaddingMode::kCircular ? "circular" : "zeros";
}

ConvDesc ConvDesc::make(Index in_channels, Index out_channels,
                        const Shape& kernel) {
  ConvDesc d;
  d.in_channels = in_channels;
  d.out_channels = out_channels;
  d.kernel = kernel;
  d.stride = Shape::filled(kernel.ndims(), 1);
  d.dilation = Shape::filled(kernel.ndims(), 1);
  d.padding_lower = Shape::filled(kernel.ndims(), 0);
  d.padding_upper = Shape::filled(kernel.ndims(), 0);
  return d;
}

void ConvDesc::validate(const Shape& src_shape) const {
  const int k = spatial_dims();
  require(k == 2 || k == 3, ErrorKind::kInvalidArgument,
          "a convolution has 2 or 3 spatial dimensions, kernel ", kernel,
          " has ", k);
  for (const Shape* s : {&stride, &dilation, &padding_lower, &padding_upper}) {
    require(s->ndims() == k, ErrorKind::kShapeMismatch, "kernel ", kernel,
            " has ", k, " spatial dimensions but stride ", stride,
            ", dilation ", dilation, ", padding ", padding_lower, " / ",
            padding_upper, " do not all have ", k);
  }
  require(padding_mode.empty() || static_cast<int>(padding_mode.size()) == k,
          ErrorKind::kShapeMismatch, "kernel ", kernel, " has ", k,
          " spatial dimensions but ", padding_mode.size(),
          " padding modes are given");
  require(src_shape.ndims() == k + 2, ErrorKind::kShapeMismatch,
          "input shape ", src_shape, " does not fit a ", k,
          "D convolution (expected N, C and ", k, " spatial extents)");
  require(groups >= 1, ErrorKind::kInvalidArgument, "groups must be >= 1, got ",
          groups);
  require(in_channels >= 1 && out_channels >= 1, ErrorKind::kInvalidArgument,
          "channels must be >= 1, got ", in_channels, " in and ", out_channels,
          " out");
  require(in_channels % groups == 0 && out_channels % groups == 0,
          ErrorKind::kInvalidArgument, in_channels, " input and ", out_channels,
          " output channels are not divisible into ", groups, " groups");
  require(src_shape[1] == in_channels, ErrorKind::kShapeMismatch,
          "input shape ", src_shape, " has ", src_shape[1],
          " channels, the convolution expects ", in_channels);
  require(src_shape[0] >= 0, ErrorKind::kInvalidArgument, "input shape ",
          src_shape, " has a negative size");
  for (int d = 0; d < k; ++d) {
    require(kernel[d] >= 1, ErrorKind::kInvalidArgument, "kernel ", kernel,
            " must be >= 1 in every dimension");
    require(stride[d] >= 1 && dilation[d] >= 1, ErrorKind::kInvalidArgument,
            "stride ", stride, " and dilation ", dilation,
            " must be >= 1 in every dimension");
    require(padding_lower[d] >= 0 && padding_upper[d] >= 0,
            ErrorKind::kInvalidArgument, "padding ", padding_lower, " / ",
            padding_upper, " must be >= 0");
    const Index padded = src_shape[d + 2] + padding_lower[d] + padding_upper[d];
    const Index span = (kernel[d] - 1) * dilation[d] + 1;
    require(src_shape[d + 2] >= 0 && span <= padded,
            ErrorKind::kInvalidArgument, "kernel ", kernel, " with dilation ",
            dilation, " spans ", span, " in spatial dimension ", d,
            ", larger than the padded input ", padded, " (input ", src_shape,
            ")");
    require(!circular(d) || (padding_lower[d] <= src_shape[d + 2] &&
                             padding_upper[d] <= src_shape[d + 2]),
            ErrorKind::kInvalidArgument, "circular padding ", padding_lower,
            " / ", padding_upper, " wraps around more than once in spatial "
            "dimension ", d, ": it may not exceed the input's extent ",
            src_shape[d + 2], " (input ", src_shape, ")");
  }
}

Shape ConvDesc::dst_shape(const Shape& src_shape) const {
  validate(src_shape);
  Shape dst = src_shape;
  dst[1] = out_channels;
  for (int d = 0; d < spatial_dims(); ++d) {
    const Index padded = src_shape[d + 2] + padding_lower[d] + padding_upper[d];
    const Index span = (kernel[d] - 1) * dilation[d] + 1;
    dst[d + 2] = (padded - span) / stride[d] + 1;
  }
  return dst;
}

Shape ConvDesc::weights_shape() const {
  Shape w = Shape::filled(spatial_dims() + 2, 0);
  w[0] = out_channels;
  w[1] = groups >= 1 ? in_channels / groups : 0;
  for (int d = 0; d < spatial_dims(); ++d) w[d + 2] = kernel[d];
  return w;
}

}  // namespace distconv
