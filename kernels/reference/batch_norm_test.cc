// The reference batch normalisation on a case worked by hand, against
// finite differences of its forward, and on the edge cases (3D, empty
// arrays, the running-statistics update).
#include "kernels/reference/batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "distconv/error.h"

namespace distconv::reference {
namespace {

// N=2, C=2, H=1, W=2. Channel 0 holds {1, 3, 1, 3}: mean 2, variance 1;
// channel 1 holds {0, 4, 4, 0}: mean 2, variance 4 (sigma 2).
const Shape kShape{2, 2, 1, 2};
const std::vector<double> kSrc = {1, 3, 0, 4,   // n = 0: c0, c1
                                  1, 3, 4, 0};  // n = 1
const std::vector<double> kScale = {2, 3}, kShift = {1, -1};
// x^ = {-1, 1, -1, 1} (c0) and {-1, 1, 1, -1} (c1).
const std::vector<double> kDiffDst = {1, 0, 0, 2,  //
                                      0, 0, 0, 0};

TEST(ReferenceBatchNorm, ForwardTrainingByHand) {
  std::vector<double> dst(8), mean(2), var(2);
  batch_norm_fwd_training(kShape, kSrc.data(), kScale.data(), kShift.data(),
                          0.0, dst.data(), mean.data(), var.data());
  EXPECT_EQ(mean, (std::vector<double>{2, 2}));
  EXPECT_EQ(var, (std::vector<double>{1, 4}));
  // 2 x^ + 1 and 3 x^ - 1.
  EXPECT_EQ(dst, (std::vector<double>{-1, 3, -4, 2,  //
                                      -1, 3, 2, -4}));
}

TEST(ReferenceBatchNorm, EpsilonEntersUnderTheRoot) {
  std::vector<double> dst(8);
  // Channel 0: sigma = sqrt(1 + 3) = 2, so x^ = {-1/2, 1/2, ...}.
  batch_norm_fwd_training(kShape, kSrc.data(), kScale.data(), kShift.data(),
                          3.0, dst.data());
  EXPECT_DOUBLE_EQ(dst[0], 0.0);  // 2 * (-1/2) + 1
  EXPECT_DOUBLE_EQ(dst[1], 2.0);
  EXPECT_DOUBLE_EQ(dst[3], 3 * 2 / std::sqrt(7.0) - 1);
}

TEST(ReferenceBatchNorm, BackwardTrainingByHand) {
  std::vector<double> dx(8), dscale(2), dshift(2);
  batch_norm_bwd_training(kShape, kSrc.data(), kDiffDst.data(), kScale.data(),
                          0.0, dx.data(), dscale.data(), dshift.data());
  // c0: dy = {1, 0, 0, 0}: mean(dy) = 1/4, mean(dy x^) = -1/4,
  //     dx = 2 (dy - 1/4 + x^/4) = {1, 0, -1, 0}.
  // c1: dy = {0, 2, 0, 0}: mean(dy) = 1/2, mean(dy x^) = 1/2,
  //     dx = 3/2 (dy - 1/2 - x^/2) = {0, 3/2, -3/2, 0}.
  EXPECT_EQ(dx, (std::vector<double>{1, 0, 0, 1.5,  //
                                     -1, 0, -1.5, 0}));
  EXPECT_EQ(dshift, (std::vector<double>{1, 2}));
  EXPECT_EQ(dscale, (std::vector<double>{-1, 2}));
}

TEST(ReferenceBatchNorm, InferenceByHand) {
  const std::vector<double> mean = {2, 2}, var = {1, 4};
  std::vector<double> dst(8), dx(8), dscale(2), dshift(2);
  batch_norm_fwd_inference(kShape, kSrc.data(), kScale.data(), kShift.data(),
                           mean.data(), var.data(), 0.0, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{-1, 3, -4, 2,  //
                                      -1, 3, 2, -4}));
  batch_norm_bwd_inference(kShape, kSrc.data(), kDiffDst.data(), kScale.data(),
                           mean.data(), var.data(), 0.0, dx.data(),
                           dscale.data(), dshift.data());
  EXPECT_EQ(dx, (std::vector<double>{2, 0, 0, 3,  //
                                     0, 0, 0, 0}));
  EXPECT_EQ(dshift, (std::vector<double>{1, 2}));
  EXPECT_EQ(dscale, (std::vector<double>{-1, 2}));
}

TEST(ReferenceBatchNorm, RunningStatisticsByHand) {
  const std::vector<double> mean = {2, 2}, var = {1, 4};
  std::vector<double> rm = {0, 10}, rv = {1, 1};
  batch_norm_update_running(2, 4, mean.data(), var.data(), 0.1, rm.data(),
                            rv.data());
  EXPECT_DOUBLE_EQ(rm[0], 0.2);
  EXPECT_DOUBLE_EQ(rm[1], 9.2);
  EXPECT_DOUBLE_EQ(rv[0], 0.9 + 0.1 * 4.0 / 3);  // unbiased: 1 * 4/3
  EXPECT_DOUBLE_EQ(rv[1], 0.9 + 0.1 * 16.0 / 3);
  // One value per channel: the variance is left alone; none: nothing moves.
  batch_norm_update_running(2, 1, mean.data(), var.data(), 0.5, rm.data(),
                            rv.data());
  EXPECT_DOUBLE_EQ(rm[0], 1.1);
  EXPECT_DOUBLE_EQ(rv[0], 0.9 + 0.1 * 4.0 / 3);
  const std::vector<double> before = rm;
  batch_norm_update_running(2, 0, mean.data(), var.data(), 0.5, rm.data(),
                            rv.data());
  EXPECT_EQ(rm, before);
}

// The statistics cover every spatial dimension: a 3D array gives the same
// result as its 2D reshape.
TEST(ReferenceBatchNorm, ThreeDimensionsAreFlattened) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(2 * 3 * 4 * 5 * 2), dy(x.size());
  for (double& v : x) v = u(rng);
  for (double& v : dy) v = u(rng);
  const std::vector<double> scale = {1, -2, 0.5}, shift = {0, 1, 2};
  std::vector<double> y3(x.size()), y2(x.size()), dx3(x.size()), dx2(x.size());
  std::vector<double> ds3(3), ds2(3), db3(3), db2(3);
  batch_norm_fwd_training(Shape{2, 3, 4, 5, 2}, x.data(), scale.data(),
                          shift.data(), 1e-5, y3.data());
  batch_norm_fwd_training(Shape{2, 3, 20, 2}, x.data(), scale.data(),
                          shift.data(), 1e-5, y2.data());
  EXPECT_EQ(y3, y2);
  batch_norm_bwd_training(Shape{2, 3, 4, 5, 2}, x.data(), dy.data(),
                          scale.data(), 1e-5, dx3.data(), ds3.data(),
                          db3.data());
  batch_norm_bwd_training(Shape{2, 3, 20, 2}, x.data(), dy.data(), scale.data(),
                          1e-5, dx2.data(), ds2.data(), db2.data());
  EXPECT_EQ(dx3, dx2);
  EXPECT_EQ(ds3, ds2);
  EXPECT_EQ(db3, db2);
}

TEST(ReferenceBatchNorm, EmptyArrays) {
  const std::vector<double> scale = {1, 2}, shift = {0, 0};
  std::vector<double> mean = {7, 7}, var = {7, 7}, ds = {7, 7}, db = {7, 7};
  batch_norm_fwd_training<double>(Shape{0, 2, 3, 3}, nullptr, scale.data(),
                                  shift.data(), 1e-5, nullptr, mean.data(),
                                  var.data());
  EXPECT_EQ(mean, (std::vector<double>{0, 0}));
  EXPECT_EQ(var, (std::vector<double>{0, 0}));
  batch_norm_bwd_training<double>(Shape{2, 2, 0, 3}, nullptr, nullptr,
                                  scale.data(), 1e-5, nullptr, ds.data(),
                                  db.data());
  EXPECT_EQ(ds, (std::vector<double>{0, 0}));
  EXPECT_EQ(db, (std::vector<double>{0, 0}));
  EXPECT_THROW(batch_norm_stats<double>(Shape{2}, nullptr, nullptr, nullptr),
               Error);
}

// Central differences of L = sum w * y with respect to x, scale and shift.
void ExpectGradientsMatchFiniteDifferences(bool training) {
  const Shape shape{2, 3, 3, 4};
  const Index n = shape.volume();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(n), w(n), scale(3), shift(3);
  for (double& v : x) v = u(rng) + 3;
  for (double& v : w) v = u(rng);
  for (double& v : scale) v = u(rng) + 1.5;
  for (double& v : shift) v = u(rng);
  const std::vector<double> mean = {3.1, 2.9, 3.0}, var = {0.3, 0.4, 0.5};
  const double eps = 1e-3;
  auto loss = [&] {
    std::vector<double> y(n);
    if (training) {
      batch_norm_fwd_training(shape, x.data(), scale.data(), shift.data(), eps,
                              y.data());
    } else {
      batch_norm_fwd_inference(shape, x.data(), scale.data(), shift.data(),
                               mean.data(), var.data(), eps, y.data());
    }
    double l = 0;
    for (Index i = 0; i < n; ++i) l += w[i] * y[i];
    return l;
  };
  auto derivative = [&](double& v) {
    const double h = 1e-6, keep = v;
    v = keep + h;
    const double up = loss();
    v = keep - h;
    const double down = loss();
    v = keep;
    return (up - down) / (2 * h);
  };
  std::vector<double> dx(n), dscale(3), dshift(3);
  if (training) {
    batch_norm_bwd_training(shape, x.data(), w.data(), scale.data(), eps,
                            dx.data(), dscale.data(), dshift.data());
  } else {
    batch_norm_bwd_inference(shape, x.data(), w.data(), scale.data(),
                             mean.data(), var.data(), eps, dx.data(),
                             dscale.data(), dshift.data());
  }
  for (Index i = 0; i < n; ++i) {
    EXPECT_NEAR(dx[i], derivative(x[i]), 1e-6) << "x[" << i << "]";
  }
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(dscale[c], derivative(scale[c]), 1e-6) << "scale " << c;
    EXPECT_NEAR(dshift[c], derivative(shift[c]), 1e-6) << "shift " << c;
  }
}

TEST(ReferenceBatchNorm, TrainingGradientsMatchFiniteDifferences) {
  ExpectGradientsMatchFiniteDifferences(true);
}

TEST(ReferenceBatchNorm, InferenceGradientsMatchFiniteDifferences) {
  ExpectGradientsMatchFiniteDifferences(false);
}

TEST(ReferenceBatchNorm, FloatAgreesWithDouble) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  const Shape shape{3, 2, 5, 7};
  std::vector<double> xd(shape.volume()), yd(xd.size());
  std::vector<float> xf(xd.size()), yf(xd.size());
  for (size_t i = 0; i < xd.size(); ++i) xf[i] = float(xd[i] = u(rng));
  const std::vector<double> sd = {0.5, 2}, bd = {1, -1};
  const std::vector<float> sf = {0.5f, 2}, bf = {1, -1};
  batch_norm_fwd_training(shape, xd.data(), sd.data(), bd.data(), 1e-5,
                          yd.data());
  batch_norm_fwd_training(shape, xf.data(), sf.data(), bf.data(), 1e-5,
                          yf.data());
  for (size_t i = 0; i < xd.size(); ++i) EXPECT_NEAR(yf[i], yd[i], 1e-5);
}

}  // namespace
}  // namespace distconv::reference
