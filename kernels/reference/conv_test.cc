#include "kernels/reference/conv.h"

#include <cmath>
#include <random>
#include <vector>

#include "distconv/error.h"
#include "gtest/gtest.h"

namespace distconv::reference {
namespace {

std::vector<double> iota(Index n, double first = 1) {
  std::vector<double> v(n);
  for (Index i = 0; i < n; ++i) v[i] = first + i;
  return v;
}

// 3x3 input 1..9, 2x2 kernel of ones: each output sums a 2x2 window.
TEST(ReferenceConv, ForwardByHand) {
  const ConvDesc conv = ConvDesc::make(1, 1, {2, 2});
  const Shape x{1, 1, 3, 3}, y = conv.dst_shape(x);
  ASSERT_EQ(y, (Shape{1, 1, 2, 2}));
  const std::vector<double> src = iota(9), w(4, 1.0);
  std::vector<double> dst(4);
  conv_fwd(conv, x, src.data(), w.data(), nullptr, y, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{12, 16, 24, 28}));
}

// "Same" 3x3 of ones on 3x3: sums of the neighbourhoods inside the image.
TEST(ReferenceConv, SamePaddingByHand) {
  ConvDesc conv = ConvDesc::make(1, 1, {3, 3});
  conv.padding_lower = conv.padding_upper = {1, 1};
  const Shape x{1, 1, 3, 3}, y = conv.dst_shape(x);
  ASSERT_EQ(y, x);
  const std::vector<double> src = iota(9), w(9, 1.0);
  std::vector<double> dst(9);
  conv_fwd(conv, x, src.data(), w.data(), nullptr, y, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
}

// W = [1 2 3 4 5], kernel [1 10] with dilation 2, stride 2, padding 1 before
// and 0 after: padded [0 1 2 3 4 5]; taps at p and p + 2 for p = 0, 2.
TEST(ReferenceConv, StrideDilationAsymmetricPaddingByHand) {
  ConvDesc conv = ConvDesc::make(1, 1, {1, 2});
  conv.stride = {1, 2};
  conv.dilation = {1, 2};
  conv.padding_lower = {0, 1};
  const Shape x{1, 1, 1, 5}, y = conv.dst_shape(x);
  ASSERT_EQ(y, (Shape{1, 1, 1, 2}));
  const std::vector<double> src = iota(5), w{1, 10};
  std::vector<double> dst(2);
  conv_fwd(conv, x, src.data(), w.data(), nullptr, y, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{0 * 1 + 2 * 10, 2 * 1 + 4 * 10}));
}

// Circular padding in W, zeros in H: W = [1 2 3 4 5] padded by wrapping
// to [4 5 | 1 2 3 4 5 | 1]; kernel row [1 10 100] with stride 2 reads
// (4 5 1), (1 2 3) and (3 4 5); the kernel's second row meets the zero
// padding below in H and adds nothing.
TEST(ReferenceConv, CircularPaddingWrapsByHand) {
  ConvDesc conv = ConvDesc::make(1, 1, {2, 3});
  conv.stride = {1, 2};
  conv.padding_lower = {0, 2};
  conv.padding_upper = {1, 1};
  conv.padding_mode = {PaddingMode::kZeros, PaddingMode::kCircular};
  const Shape x{1, 1, 1, 5}, y = conv.dst_shape(x);
  ASSERT_EQ(y, (Shape{1, 1, 1, 3}));
  const std::vector<double> src = iota(5), w{1, 10, 100, 7, 7, 7};
  std::vector<double> dst(3);
  conv_fwd(conv, x, src.data(), w.data(), nullptr, y, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{4 + 50 + 100, 1 + 20 + 300,
                                      3 + 40 + 500}));
  // The input gradient adds each window's weights at the wrapped cells.
  const std::vector<double> dy{1, 1, 1};
  std::vector<double> dx(5);
  conv_bwd_data(conv, y, dy.data(), w.data(), x, dx.data());
  EXPECT_EQ(dx, (std::vector<double>{100 + 1, 10, 100 + 1, 1 + 10, 100 + 10}));
}

// Two groups, 1x1 kernels: each output channel sees only its own input.
TEST(ReferenceConv, GroupsAndBiasByHand) {
  ConvDesc conv = ConvDesc::make(2, 2, {1, 1});
  conv.groups = 2;
  conv.bias = ConvBias::kAdd;
  const Shape x{1, 2, 1, 2}, y = conv.dst_shape(x);
  ASSERT_EQ(conv.weights_shape(), (Shape{2, 1, 1, 1}));
  const std::vector<double> src{1, 2, 3, 4}, w{2, 3}, b{100, 200};
  std::vector<double> dst(4);
  conv_fwd(conv, x, src.data(), w.data(), b.data(), y, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{102, 104, 209, 212}));
}

// 2x2x2 volume 1..8, kernel 2x1x1 of ones: sums over D.
TEST(ReferenceConv, ThreeDimensionsByHand) {
  const ConvDesc conv = ConvDesc::make(1, 1, {2, 1, 1});
  const Shape x{1, 1, 2, 2, 2}, y = conv.dst_shape(x);
  ASSERT_EQ(y, (Shape{1, 1, 1, 2, 2}));
  const std::vector<double> src = iota(8), w(2, 1.0);
  std::vector<double> dst(4);
  conv_fwd(conv, x, src.data(), w.data(), nullptr, y, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{6, 8, 10, 12}));
}

// Backward of the first case: diff_src counts the windows covering each
// input; diff_weights sums the input under each tap; diff_bias counts
// outputs.
TEST(ReferenceConv, BackwardByHand) {
  ConvDesc conv = ConvDesc::make(1, 1, {2, 2});
  conv.bias = ConvBias::kAdd;
  const Shape x{1, 1, 3, 3}, y{1, 1, 2, 2};
  const std::vector<double> src = iota(9), w(4, 1.0), dy(4, 1.0);
  std::vector<double> dx(9, -1), dw(4, -1), db(1, -1);
  conv_bwd_data(conv, y, dy.data(), w.data(), x, dx.data());
  EXPECT_EQ(dx, (std::vector<double>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
  conv_bwd_weights(conv, x, src.data(), y, dy.data(), dw.data(), db.data());
  EXPECT_EQ(dw, (std::vector<double>{12, 16, 24, 28}));
  EXPECT_EQ(db, (std::vector<double>{4}));
}

// <conv(x, w), y> == <x, bwd_data(y, w)> == <w, bwd_weights(x, y)> over
// random 2D and 3D geometries with groups, in double.
TEST(ReferenceConv, BackwardPassesAreAdjointsOverRandomGeometries) {
  std::mt19937_64 rng(11);
  auto pick = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const int k = pick(2, 3);
    const Index groups = pick(1, 2);
    Shape kernel = Shape::filled(k, 1);
    for (int d = 0; d < k; ++d) kernel[d] = pick(1, 3);
    ConvDesc conv =
        ConvDesc::make(groups * pick(1, 2), groups * pick(1, 2), kernel);
    conv.groups = groups;
    Shape x = Shape::filled(k + 2, 1);
    x[0] = pick(1, 2);
    x[1] = conv.in_channels;
    for (int d = 0; d < k; ++d) {
      conv.stride[d] = pick(1, 3);
      conv.dilation[d] = pick(1, 2);
      conv.padding_lower[d] = pick(0, 2);
      conv.padding_upper[d] = pick(0, 2);
      x[d + 2] = (kernel[d] - 1) * conv.dilation[d] + pick(1, 5);
    }
    const Shape y = conv.dst_shape(x);
    std::vector<double> src(x.volume()), w(conv.weights_shape().volume()),
        dy(y.volume()), dst(y.volume()), dx(x.volume()), dw(w.size());
    for (auto* v : {&src, &w, &dy}) {
      for (double& e : *v) e = u(rng);
    }
    conv_fwd(conv, x, src.data(), w.data(), nullptr, y, dst.data());
    conv_bwd_data(conv, y, dy.data(), w.data(), x, dx.data());
    conv_bwd_weights(conv, x, src.data(), y, dy.data(), dw.data(), nullptr);
    double a = 0, b = 0, c = 0;
    for (size_t i = 0; i < dst.size(); ++i) a += dst[i] * dy[i];
    for (size_t i = 0; i < dx.size(); ++i) b += src[i] * dx[i];
    for (size_t i = 0; i < dw.size(); ++i) c += w[i] * dw[i];
    ASSERT_NEAR(a, b, 1e-12 * std::max(1.0, std::abs(a))) << "trial " << trial;
    ASSERT_NEAR(a, c, 1e-12 * std::max(1.0, std::abs(a))) << "trial " << trial;
  }
}

TEST(ReferenceConv, FloatMatchesDouble) {
  ConvDesc conv = ConvDesc::make(2, 4, {3, 3});
  conv.groups = 2;
  conv.stride = {2, 1};
  conv.padding_lower = {1, 0};
  conv.padding_upper = {0, 2};
  conv.bias = ConvBias::kAdd;
  const Shape x{2, 2, 7, 6}, y = conv.dst_shape(x);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> src(x.volume()), w(conv.weights_shape().volume()),
      b(4), dst(y.volume());
  for (auto* v : {&src, &w, &b}) {
    for (double& e : *v) e = u(rng);
  }
  std::vector<float> srcf(src.begin(), src.end()), wf(w.begin(), w.end()),
      bf(b.begin(), b.end()), dstf(y.volume());
  conv_fwd(conv, x, src.data(), w.data(), b.data(), y, dst.data());
  conv_fwd(conv, x, srcf.data(), wf.data(), bf.data(), y, dstf.data());
  for (size_t i = 0; i < dst.size(); ++i) EXPECT_NEAR(dstf[i], dst[i], 1e-5);
}

TEST(ReferenceConv, RejectsMismatchedShapesAndMissingBias) {
  ConvDesc conv = ConvDesc::make(1, 1, {2, 2});
  std::vector<double> buf(64);
  EXPECT_THROW(conv_fwd(conv, Shape{1, 1, 3, 3}, buf.data(), buf.data(),
                        nullptr, Shape{1, 1, 3, 3}, buf.data()),
               Error);
  conv.bias = ConvBias::kAdd;
  EXPECT_THROW(conv_fwd(conv, Shape{1, 1, 3, 3}, buf.data(), buf.data(),
                        nullptr, Shape{1, 1, 2, 2}, buf.data()),
               Error);
  EXPECT_THROW(conv_bwd_weights(conv, Shape{1, 1, 3, 3}, buf.data(),
                                Shape{1, 1, 2, 2}, buf.data(), buf.data(),
                                nullptr),
               Error);
}

}  // namespace
}  // namespace distconv::reference
