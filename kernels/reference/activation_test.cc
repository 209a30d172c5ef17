// The reference activations on values worked by hand.
#include "kernels/reference/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace distconv::reference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ReferenceActivation, ReluByHand) {
  const std::vector<double> x = {-2, -0.5, 0, 0.5, 3, -kInf, kInf};
  std::vector<double> y(x.size());
  activation_fwd(ActivationDesc::relu(), Index(x.size()), x.data(), y.data());
  EXPECT_EQ(y, (std::vector<double>{0, 0, 0, 0.5, 3, 0, kInf}));
  const std::vector<double> dy = {1, 2, 3, 4, 5, 6, 7};
  std::vector<double> dx(x.size());
  activation_bwd(ActivationDesc::relu(), Index(x.size()), x.data(), dy.data(),
                 dx.data());
  // The derivative at 0 is the left one.
  EXPECT_EQ(dx, (std::vector<double>{0, 0, 0, 4, 5, 0, 7}));
}

TEST(ReferenceActivation, LeakyReluByHand) {
  const ActivationDesc leaky = ActivationDesc::leaky_relu(0.25);
  const std::vector<float> x = {-4, -1, 0, 2};
  std::vector<float> y(4), dx(4);
  activation_fwd(leaky, 4, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{-1, -0.25f, 0, 2}));
  activation_bwd(leaky, 4, x.data(), std::vector<float>{4, 8, 12, 16}.data(),
                 dx.data());
  EXPECT_EQ(dx, (std::vector<float>{1, 2, 3, 16}));
  // A negative slope flips the sign of the negative part.
  activation_fwd(ActivationDesc::leaky_relu(-2), 4, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{8, 2, 0, 2}));
}

TEST(ReferenceActivation, NanPropagatesThroughTheForward) {
  const std::vector<double> x = {std::nan("")};
  std::vector<double> y(1);
  activation_fwd(ActivationDesc::relu(), 1, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  activation_fwd(ActivationDesc::leaky_relu(), 1, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
}

}  // namespace
}  // namespace distconv::reference
