#include "distconv/deconv_desc.h"

#include <string>

#include "distconv/error.h"
#include "gtest/gtest.h"

namespace distconv {
namespace {

TEST(DeconvDesc, OutputShapesAreThoseOfPytorchConvTranspose) {
  DeconvDesc up = DeconvDesc::make(32, 16, {4, 4});
  up.stride = {2, 2};
  up.padding_lower = up.padding_upper = {1, 1};
  EXPECT_EQ(up.dst_shape({1, 32, 256, 256}), (Shape{1, 16, 512, 512}));
  EXPECT_EQ(up.weights_shape(), (Shape{32, 16, 4, 4}));
  // 3x3 stride 2 padding 1: 5 -> 9, or 10 with output padding 1.
  DeconvDesc odd = DeconvDesc::make(4, 6, {3, 3});
  odd.groups = 2;
  odd.stride = {2, 2};
  odd.padding_lower = odd.padding_upper = {1, 1};
  EXPECT_EQ(odd.dst_shape({2, 4, 5, 5}), (Shape{2, 6, 9, 9}));
  odd.output_padding = {1, 0};
  EXPECT_EQ(odd.dst_shape({2, 4, 5, 5}), (Shape{2, 6, 10, 9}));
  EXPECT_EQ(odd.weights_shape(), (Shape{4, 3, 3, 3}));
  // The adjoint convolution maps the output back to the input.
  const ConvDesc conv = odd.adjoint();
  EXPECT_EQ(conv.in_channels, 6);
  EXPECT_EQ(conv.out_channels, 4);
  EXPECT_EQ(conv.dst_shape({2, 6, 10, 9}), (Shape{2, 4, 5, 5}));
  // 3D, lop-sided, dilation 2: (3 - 1) * 1 + (3 - 1) * 2 + 1 = 7.
  DeconvDesc vol = DeconvDesc::make(2, 2, {3, 1, 2});
  vol.dilation = {2, 1, 1};
  EXPECT_EQ(vol.dst_shape({1, 2, 3, 4, 5}), (Shape{1, 2, 7, 4, 6}));
}

std::string error_of(const DeconvDesc& d, const Shape& x) {
  try {
    d.validate(x);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DeconvDesc, BadInputNamesTheValues) {
  DeconvDesc d = DeconvDesc::make(8, 4, {3, 3});
  EXPECT_NE(error_of(d, {1, 4, 5, 5}).find("has 4 channels, the transposed "
                                           "convolution expects 8"),
            std::string::npos);
  d.stride = {2, 2};
  d.output_padding = {2, 0};
  EXPECT_NE(error_of(d, {1, 8, 5, 5}).find("smaller than the stride"),
            std::string::npos);
  d.output_padding = {0, 0};
  d.padding_lower = d.padding_upper = {5, 0};
  EXPECT_NE(error_of(d, {1, 8, 2, 5}).find("has no output"),
            std::string::npos);
  d.padding_lower = d.padding_upper = {0, 0};
  d.groups = 3;
  EXPECT_NE(error_of(d, {1, 8, 2, 5}).find("groups"), std::string::npos);
  d.groups = 1;
  EXPECT_NE(error_of(d, {1, 8, 0, 5}).find("spatial extents >= 1"),
            std::string::npos);
  EXPECT_NE(error_of(d, {1, 8, 5}).find("does not fit"), std::string::npos);
  EXPECT_EQ(error_of(d, {0, 8, 2, 5}), "no error");  // no samples is fine
}

}  // namespace
}  // namespace distconv
