// The reference softmax on cases worked by hand, its stability, and its
// backward against finite differences of its forward.
#include "kernels/reference/softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace distconv::reference {
namespace {

// (1, 2, 1, 2): two cells; channel c of cell s sits at c * 2 + s.
TEST(ReferenceSoftmax, TwoCellsByHand) {
  const Shape shape{1, 2, 1, 2};
  const std::vector<double> x = {0, 5, std::log(3.0), 5};
  std::vector<double> y(4);
  softmax_fwd(SoftmaxKind::kSoftmax, shape, x.data(), y.data());
  EXPECT_NEAR(y[0], 0.25, 1e-15);
  EXPECT_NEAR(y[2], 0.75, 1e-15);
  EXPECT_NEAR(y[1], 0.5, 1e-15);
  EXPECT_NEAR(y[3], 0.5, 1e-15);
  softmax_fwd(SoftmaxKind::kLogSoftmax, shape, x.data(), y.data());
  EXPECT_NEAR(y[0], std::log(0.25), 1e-15);
  EXPECT_NEAR(y[2], std::log(0.75), 1e-15);
  EXPECT_NEAR(y[1], std::log(0.5), 1e-15);
}

TEST(ReferenceSoftmax, LargeLogitsDoNotOverflow) {
  const Shape shape{1, 3, 1, 1};
  const std::vector<float> x = {1000.0f, 1000.0f, -1000.0f};
  std::vector<float> y(3);
  softmax_fwd(SoftmaxKind::kSoftmax, shape, x.data(), y.data());
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[1], 0.5f);
  EXPECT_FLOAT_EQ(y[2], 0.0f);
  softmax_fwd(SoftmaxKind::kLogSoftmax, shape, x.data(), y.data());
  EXPECT_NEAR(y[0], -std::log(2.0), 1e-6);
  EXPECT_NEAR(y[2], -2000 - std::log(2.0), 1e-3);
}

TEST(ReferenceSoftmax, BackwardByHand) {
  // y = (1/4, 3/4), dy = (1, 0): sum dy*y = 1/4; dx = y * (dy - 1/4).
  const Shape shape{1, 2, 1, 1};
  const std::vector<double> y = {0.25, 0.75}, dy = {1, 0};
  std::vector<double> dx(2);
  softmax_bwd(SoftmaxKind::kSoftmax, shape, y.data(), dy.data(), dx.data());
  EXPECT_NEAR(dx[0], 0.25 * 0.75, 1e-15);
  EXPECT_NEAR(dx[1], -0.75 * 0.25, 1e-15);
  // log-softmax: dx = dy - exp(y) * sum dy = (1 - 1/4, -3/4).
  const std::vector<double> logy = {std::log(0.25), std::log(0.75)};
  softmax_bwd(SoftmaxKind::kLogSoftmax, shape, logy.data(), dy.data(),
              dx.data());
  EXPECT_NEAR(dx[0], 0.75, 1e-15);
  EXPECT_NEAR(dx[1], -0.75, 1e-15);
}

// <dy, (f(x + h e_i) - f(x - h e_i)) / 2h> == dx_i for every i.
TEST(ReferenceSoftmax, BackwardMatchesFiniteDifferences) {
  for (SoftmaxKind kind : {SoftmaxKind::kSoftmax, SoftmaxKind::kLogSoftmax}) {
    for (const Shape& shape : {Shape{2, 3, 2, 3}, Shape{1, 4, 2, 1, 2}}) {
      std::mt19937_64 rng(3);
      std::uniform_real_distribution<double> u(-2, 2);
      std::vector<double> x(shape.volume()), dy(x.size());
      for (double& v : x) v = u(rng);
      for (double& v : dy) v = u(rng);
      std::vector<double> y(x.size()), dx(x.size());
      softmax_fwd(kind, shape, x.data(), y.data());
      softmax_bwd(kind, shape, y.data(), dy.data(), dx.data());
      const double h = 1e-6;
      std::vector<double> yp(x.size()), ym(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        std::vector<double> xp = x, xm = x;
        xp[i] += h;
        xm[i] -= h;
        softmax_fwd(kind, shape, xp.data(), yp.data());
        softmax_fwd(kind, shape, xm.data(), ym.data());
        double fd = 0;
        for (size_t j = 0; j < x.size(); ++j) {
          fd += dy[j] * (yp[j] - ym[j]) / (2 * h);
        }
        EXPECT_NEAR(dx[i], fd, 1e-8)
            << to_string(kind) << " " << shape << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace distconv::reference
