#include "distconv/conv_desc.h"

#include <string>

#include "distconv/error.h"
#include "gtest/gtest.h"

namespace distconv {
namespace {

TEST(ConvDesc, OutputShapes) {
  ConvDesc same = ConvDesc::make(16, 32, {3, 3});
  same.padding_lower = same.padding_upper = {1, 1};
  EXPECT_EQ(same.dst_shape({1, 16, 1024, 1024}), (Shape{1, 32, 1024, 1024}));
  EXPECT_EQ(same.weights_shape(), (Shape{32, 16, 3, 3}));
  // A 7x7 stride-2 stem with padding 3: 224 -> 112.
  ConvDesc stem = ConvDesc::make(3, 64, {7, 7});
  stem.stride = {2, 2};
  stem.padding_lower = stem.padding_upper = {3, 3};
  EXPECT_EQ(stem.dst_shape({8, 3, 224, 224}), (Shape{8, 64, 112, 112}));
  // 3D, lop-sided kernel, dilation 2: span (3-1)*2+1 = 5 over D.
  ConvDesc vol = ConvDesc::make(4, 8, {3, 1, 2});
  vol.dilation = {2, 1, 1};
  vol.groups = 2;
  EXPECT_EQ(vol.dst_shape({1, 4, 9, 5, 5}), (Shape{1, 8, 5, 5, 4}));
  EXPECT_EQ(vol.weights_shape(), (Shape{8, 2, 3, 1, 2}));
}

std::string error_of(const ConvDesc& c, const Shape& x) {
  try {
    c.validate(x);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ConvDesc, BadInputNamesTheValues) {
  const ConvDesc c = ConvDesc::make(16, 16, {3, 3});
  EXPECT_EQ(error_of(c, {1, 8, 32, 32}),
            "distconv: shape mismatch: input shape 1x8x32x32 has 8 channels, "
            "the convolution expects 16");
  EXPECT_EQ(error_of(c, {1, 16, 2, 32}),
            "distconv: invalid argument: kernel 3x3 with dilation 1x1 spans 3 "
            "in spatial dimension 0, larger than the padded input 2 (input "
            "1x16x2x32)");
  EXPECT_NE(error_of(c, {1, 16, 32}).find("does not fit a 2D convolution"),
            std::string::npos);
  ConvDesc g = c;
  g.groups = 3;
  EXPECT_NE(error_of(g, {1, 16, 8, 8}).find("not divisible into 3 groups"),
            std::string::npos);
  ConvDesc s = c;
  s.stride = {0, 1};
  EXPECT_NE(error_of(s, {1, 16, 8, 8}).find("must be >= 1"), std::string::npos);
  ConvDesc p = c;
  p.padding_lower = {-1, 0};
  EXPECT_NE(error_of(p, {1, 16, 8, 8}).find("must be >= 0"), std::string::npos);
  ConvDesc d = c;
  d.dilation = {1, 1, 1};
  EXPECT_NE(error_of(d, {1, 16, 8, 8}).find("do not all have 2"),
            std::string::npos);
  EXPECT_NE(error_of(c, {-1, 16, 8, 8}).find("negative size"),
            std::string::npos);
  EXPECT_THROW(ConvDesc::make(1, 1, {3}).validate({1, 1, 8}), Error);
  ConvDesc m = c;
  m.padding_mode = {PaddingMode::kCircular};
  EXPECT_EQ(error_of(m, {1, 16, 8, 8}),
            "distconv: shape mismatch: kernel 3x3 has 2 spatial dimensions "
            "but 1 padding modes are given");
}

// Circular padding wraps around once at most, as in PyTorch; zero padding
// may be wider than the input.
TEST(ConvDesc, CircularPaddingNoWiderThanTheInput) {
  ConvDesc c = ConvDesc::make(1, 1, {5, 1});
  c.padding_lower = {4, 0};
  c.padding_upper = {3, 0};
  c.padding_mode = {PaddingMode::kCircular, PaddingMode::kZeros};
  EXPECT_EQ(c.dst_shape({1, 1, 4, 2}), (Shape{1, 1, 7, 2}));
  EXPECT_EQ(error_of(c, {1, 1, 3, 2}),
            "distconv: invalid argument: circular padding 4x0 / 3x0 wraps "
            "around more than once in spatial dimension 0: it may not exceed "
            "the input's extent 3 (input 1x1x3x2)");
  c.padding_mode[0] = PaddingMode::kZeros;
  EXPECT_EQ(c.dst_shape({1, 1, 3, 2}), (Shape{1, 1, 6, 2}));
  EXPECT_FALSE(c.circular(1));
  EXPECT_FALSE(ConvDesc::make(1, 1, {3, 3}).circular(0));
}

}  // namespace
}  // namespace distconv
