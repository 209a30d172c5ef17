// Test cases of the transposed convolution (the host layer's tests
// against the reference, the GPU layer's against the host layer): the
// support matrix of descriptions and input shapes, 2D and 3D, every case
// meant to run on every grid that keeps channels whole.
//
//   for (const DeconvCase& c : deconv_cases()) ... c.desc, c.src_shape ...
#ifndef DISTCONV_LAYERS_DECONV_CASES_H_
#define DISTCONV_LAYERS_DECONV_CASES_H_

#include <string>
#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/deconv_desc.h"
#include "distconv/shape.h"

namespace distconv::testing {

struct DeconvCase {
  std::string name;
  DeconvDesc desc;
  Shape src_shape;
};

inline DeconvDesc deconv(Index c, Index f, Shape k, Shape s, Shape pl, Shape pu,
                         ConvBias bias = ConvBias::kNone) {
  DeconvDesc d = DeconvDesc::make(c, f, k);
  d.stride = s;
  d.padding_lower = pl;
  d.padding_upper = pu;
  d.bias = bias;
  return d;
}

// The support matrix: every case runs on every grid.
inline std::vector<DeconvCase> deconv_cases() {
  const ConvBias kB = ConvBias::kAdd;
  DeconvDesc op = deconv(3, 2, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  op.output_padding = {1, 0};
  DeconvDesc dil = deconv(2, 3, {3, 2}, {2, 1}, {2, 0}, {1, 1}, kB);
  dil.dilation = {2, 3};
  DeconvDesc grouped = deconv(4, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  grouped.groups = 2;
  grouped.output_padding = {1, 1};
  DeconvDesc lopsided =
      deconv(2, 3, {3, 1, 2}, {2, 1, 1}, {1, 0, 0}, {0, 0, 1}, kB);
  lopsided.dilation = {1, 1, 2};
  const PaddingMode kC = PaddingMode::kCircular, kZ = PaddingMode::kZeros;
  DeconvDesc unet_circular = deconv(3, 2, {4, 4}, {2, 2}, {1, 1}, {1, 1});
  unet_circular.padding_mode = {kC, kC};
  DeconvDesc lopsided_circular = lopsided;
  lopsided_circular.padding_mode = {kC, kZ, kC};
  // The output's padding as wide as the output: one rank wraps onto
  // itself, several reach past their neighbours.
  DeconvDesc wide_circular = deconv(1, 2, {5, 5}, {1, 1}, {2, 1}, {2, 1}, kB);
  wide_circular.padding_mode = {kC, kC};
  return {
      {"unet_4x4_stride2_pad1_circular", unet_circular, {2, 3, 5, 6}},
      {"3d_lopsided_dilation_circular_d_w", lopsided_circular, {2, 2, 4, 3, 4}},
      {"circular_padding_as_wide_as_the_output", wide_circular, {1, 1, 2, 3}},
      {"unet_4x4_stride2_pad1",
       deconv(3, 2, {4, 4}, {2, 2}, {1, 1}, {1, 1}),
       {2, 3, 5, 6}},
      {"2x2_stride2_bias",
       deconv(2, 3, {2, 2}, {2, 2}, {0, 0}, {0, 0}, kB),
       {1, 2, 5, 7}},
      {"3x3_stride1_same_bias",
       deconv(2, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1}, kB),
       {2, 2, 7, 6}},
      {"3x3_stride2_output_padding", op, {1, 3, 5, 6}},
      {"kernel_smaller_than_stride_leaves_gaps",
       deconv(2, 2, {2, 1}, {3, 2}, {0, 0}, {0, 0}, kB),
       {1, 2, 4, 5}},
      {"asymmetric_padding_dilation", dil, {1, 2, 6, 5}},
      {"groups", grouped, {1, 4, 4, 5}},
      {"3d_2x2x2_stride2_bias",
       deconv(2, 2, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, kB),
       {1, 2, 3, 4, 3}},
      {"3d_lopsided_dilation", lopsided, {2, 2, 4, 3, 4}},
  };
}

}  // namespace distconv::testing

#endif  // DISTCONV_LAYERS_DECONV_CASES_H_
