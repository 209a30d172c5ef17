#include "distconv/deconv_desc.h"

#include "distconv/error.h"

namespace distconv {
namespace {

// The output shape, from shapes already checked to fit.
Shape output_shape(const DeconvDesc& d, const Shape& src_shape) {
  Shape out = src_shape;
  out[1] = d.out_channels;
  for (int j = 0; j < d.spatial_dims(); ++j) {
    out[j + 2] = (src_shape[j + 2] - 1) * d.stride[j] - d.padding_lower[j] -
                 d.padding_upper[j] + (d.kernel[j] - 1) * d.dilation[j] + 1 +
                 d.output_padding[j];
  }
  return out;
}

}  // namespace

DeconvDesc DeconvDesc::make(Index in_channels, Index out_channels,
                            const Shape& kernel) {
  const ConvDesc c = ConvDesc::make(out_channels, in_channels, kernel);
  DeconvDesc d;
  d.in_channels = in_channels;
  d.out_channels = out_channels;
  d.kernel = kernel;
  d.stride = c.stride;
  d.dilation = c.dilation;
  d.padding_lower = c.padding_lower;
  d.padding_upper = c.padding_upper;
  d.output_padding = c.padding_lower;  // zeros
  return d;
}

ConvDesc DeconvDesc::adjoint() const {
  ConvDesc c = ConvDesc::make(out_channels, in_channels, kernel);
  c.groups = groups;
  c.stride = stride;
  c.dilation = dilation;
  c.padding_lower = padding_lower;
  c.padding_upper = padding_upper;
  c.padding_mode = padding_mode;
  return c;
}

void DeconvDesc::validate(const Shape& src_shape) const {
  const int k = spatial_dims();
  require(k == 2 || k == 3, ErrorKind::kInvalidArgument,
          "a transposed convolution has 2 or 3 spatial dimensions, kernel ",
          kernel, " has ", k);
  for (const Shape* s :
       {&stride, &dilation, &padding_lower, &padding_upper, &output_padding}) {
    require(s->ndims() == k, ErrorKind::kShapeMismatch, "kernel ", kernel,
            " has ", k, " spatial dimensions but stride ", stride,
            ", dilation ", dilation, ", padding ", padding_lower, " / ",
            padding_upper, ", output padding ", output_padding,
            " do not all have ", k);
  }
  require(src_shape.ndims() == k + 2, ErrorKind::kShapeMismatch, "input shape ",
          src_shape, " does not fit a ", k,
          "D transposed convolution (expected N, C and ", k,
          " spatial extents)");
  require(src_shape[1] == in_channels, ErrorKind::kShapeMismatch,
          "input shape ", src_shape, " has ", src_shape[1],
          " channels, the transposed convolution expects ", in_channels);
  for (int d = 0; d < k; ++d) {
    require(src_shape[d + 2] >= 1, ErrorKind::kInvalidArgument, "input shape ",
            src_shape,
            " must have spatial extents >= 1 (a transposed convolution of "
            "nothing has no defined output size)");
    require(kernel[d] >= 1 && dilation[d] >= 1, ErrorKind::kInvalidArgument,
            "kernel ", kernel, " and dilation ", dilation,
            " must be >= 1 in every dimension");
    require(stride[d] >= 1 && output_padding[d] >= 0 &&
                output_padding[d] < stride[d],
            ErrorKind::kInvalidArgument, "output padding ", output_padding,
            " must be >= 0 and smaller than the stride ", stride);
  }
  // The adjoint convolution checks channels, groups, kernel, stride,
  // dilation and padding, and that the output is large enough for it.
  const Shape out = output_shape(*this, src_shape);
  for (int d = 0; d < k; ++d) {
    require(out[d + 2] >= 1, ErrorKind::kInvalidArgument,
            "transposed convolution of input ", src_shape, " with kernel ",
            kernel, ", stride ", stride, " and padding ", padding_lower, " / ",
            padding_upper, " has no output in spatial dimension ", d);
  }
  const ConvDesc conv = adjoint();
  conv.validate(out);
  require(conv.dst_shape(out) == src_shape, ErrorKind::kInvalidArgument,
          "the transposed convolution's output ", out,
          " does not map back to its input ", src_shape,
          " under the adjoint convolution");
}

Shape DeconvDesc::dst_shape(const Shape& src_shape) const {
  validate(src_shape);
  return output_shape(*this, src_shape);
}

Shape DeconvDesc::weights_shape() const { return adjoint().weights_shape(); }

}  // namespace distconv
