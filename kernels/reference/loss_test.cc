// The reference losses on cases worked by hand, and their gradients
// against finite differences of the forward.
#include "kernels/reference/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "distconv/error.h"

namespace distconv::reference {
namespace {

const Shape kTwoSamples{2, 2, 1, 2};  // two samples of two cells, C = 2

// Logits of the four cells (n, s), stored (n, c, s): cell (0, 0) is
// (0, ln 3), cell (0, 1) is (0, 0), cell (1, 0) is (ln 3, 0), cell (1, 1)
// is (1000, 1000) (large: needs the maximum subtracted).
std::vector<double> logits() {
  const double l3 = std::log(3.0);
  return {0,  0,    l3, 0,  //
          l3, 1000, 0,  1000};
}

TEST(ReferenceLoss, CrossEntropyIndicesByHand) {
  // Targets: (0,0) -> 1: -log 3/4; (0,1) -> 0: log 2; (1,0) -> 1: log 4;
  // (1,1) -> 1: log 2.
  const std::vector<std::int64_t> t = {1, 0, 1, 1};
  const double a = -std::log(0.75), b = std::log(2.0), c = std::log(4.0);
  LossDesc d = LossDesc::make(LossKind::kCrossEntropyIndices);
  std::vector<double> per(2);
  EXPECT_NEAR(loss_fwd(d, kTwoSamples, logits().data(), t.data(), per.data()),
              (a + b + c + b) / 4, 1e-14);
  EXPECT_NEAR(per[0], (a + b) / 2, 1e-14);
  EXPECT_NEAR(per[1], (c + b) / 2, 1e-14);
  d.reduction = LossReduction::kSum;
  EXPECT_NEAR(loss_fwd(d, kTwoSamples, logits().data(), t.data(), per.data()),
              a + b + c + b, 1e-13);
  EXPECT_NEAR(per[1], c + b, 1e-14);
  // Ignoring class 0 drops cell (0, 1): the mean counts three cells.
  d.reduction = LossReduction::kMean;
  d.ignore_index = 0;
  EXPECT_NEAR(loss_fwd(d, kTwoSamples, logits().data(), t.data(), per.data()),
              (a + c + b) / 3, 1e-14);
  EXPECT_NEAR(per[0], a, 1e-14);
  // Gradient of the mean: (softmax - onehot) / 3, nothing for cell (0, 1).
  std::vector<double> dx(8);
  loss_bwd(d, kTwoSamples, logits().data(), t.data(), dx.data());
  EXPECT_NEAR(dx[0], 0.25 / 3, 1e-15);   // (0, c0, s0)
  EXPECT_NEAR(dx[2], -0.25 / 3, 1e-15);  // (0, c1, s0)
  EXPECT_EQ(dx[1], 0.0);
  EXPECT_EQ(dx[3], 0.0);
  EXPECT_NEAR(dx[5], 0.5 / 3, 1e-15);   // (1, c0, s1)
  EXPECT_NEAR(dx[7], -0.5 / 3, 1e-15);  // (1, c1, s1)
}

TEST(ReferenceLoss, CrossEntropyProbabilitiesByHand) {
  // Cell (0,0) with target (1/4, 3/4): the entropy of (1/4, 3/4); the
  // other cells take one-hot targets, as the indices above.
  const std::vector<double> t = {0.25, 1, 0.75, 0,  //
                                 0,    0, 1,    1};
  const double a = -(0.25 * std::log(0.25) + 0.75 * std::log(0.75));
  const double b = std::log(2.0), c = std::log(4.0);
  LossDesc d = LossDesc::make(LossKind::kCrossEntropyProbabilities);
  std::vector<double> per(2);
  EXPECT_NEAR(loss_fwd(d, kTwoSamples, logits().data(), t.data(), per.data()),
              (a + b + c + b) / 4, 1e-14);
  EXPECT_NEAR(per[0], (a + b) / 2, 1e-14);
  // At the target the gradient of cell (0, 0) vanishes.
  std::vector<double> dx(8);
  loss_bwd(d, kTwoSamples, logits().data(), t.data(), dx.data());
  EXPECT_NEAR(dx[0], 0.0, 1e-15);
  EXPECT_NEAR(dx[2], 0.0, 1e-15);
  EXPECT_NEAR(dx[1], (0.5 - 1) / 4, 1e-15);
}

TEST(ReferenceLoss, MeanSquaredErrorByHand) {
  const std::vector<float> x = {1, 2, 3, 4, 0, 0, 0, 2};
  const std::vector<float> t = {0, 0, 0, 0, 0, 0, 0, 0};
  LossDesc d = LossDesc::make(LossKind::kMeanSquaredError);
  std::vector<double> per(2);
  EXPECT_DOUBLE_EQ(loss_fwd(d, kTwoSamples, x.data(), t.data(), per.data()),
                   34.0 / 8);
  EXPECT_DOUBLE_EQ(per[0], 30.0 / 4);
  EXPECT_DOUBLE_EQ(per[1], 4.0 / 4);
  std::vector<float> dx(8);
  loss_bwd(d, kTwoSamples, x.data(), t.data(), dx.data());
  EXPECT_FLOAT_EQ(dx[3], 2 * 4.0f / 8);
  d.reduction = LossReduction::kSum;
  EXPECT_DOUBLE_EQ(loss_fwd(d, kTwoSamples, x.data(), t.data(), nullptr), 34.0);
  loss_bwd(d, kTwoSamples, x.data(), t.data(), dx.data());
  EXPECT_FLOAT_EQ(dx[3], 8.0f);
}

TEST(ReferenceLoss, EveryCellIgnoredGivesZero) {
  LossDesc d = LossDesc::make(LossKind::kCrossEntropyIndices);
  d.ignore_index = -1;
  const std::vector<std::int64_t> t(4, -1);
  std::vector<double> dx(8, 7.0), per(2, 7.0);
  EXPECT_EQ(loss_fwd(d, kTwoSamples, logits().data(), t.data(), per.data()),
            0.0);
  EXPECT_EQ(per, std::vector<double>(2, 0.0));
  loss_bwd(d, kTwoSamples, logits().data(), t.data(), dx.data());
  EXPECT_EQ(dx, std::vector<double>(8, 0.0));
}

// d loss / d x_i against central differences, every kind and reduction.
TEST(ReferenceLoss, BackwardMatchesFiniteDifferences) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-2, 2);
  for (const Shape& shape : {Shape{2, 3, 2, 3}, Shape{2, 4, 1, 2, 2}}) {
    Shape tshape = shape;
    tshape[1] = 1;
    std::vector<double> x(shape.volume()), tv(shape.volume());
    std::vector<std::int64_t> ti(tshape.volume());
    for (double& v : x) v = u(rng);
    for (double& v : tv) v = std::abs(u(rng));
    for (size_t i = 0; i < ti.size(); ++i) ti[i] = (i * 5 + 1) % shape[1];
    for (LossKind kind :
         {LossKind::kCrossEntropyIndices, LossKind::kCrossEntropyProbabilities,
          LossKind::kMeanSquaredError}) {
      for (LossReduction r : {LossReduction::kMean, LossReduction::kSum}) {
        LossDesc d = LossDesc::make(kind, r);
        if (kind == LossKind::kCrossEntropyIndices) d.ignore_index = 2;
        auto f = [&](const std::vector<double>& at) {
          return d.takes_indices()
                     ? loss_fwd(d, shape, at.data(), ti.data(), nullptr)
                     : loss_fwd(d, shape, at.data(), tv.data(), nullptr);
        };
        std::vector<double> dx(x.size());
        if (d.takes_indices()) {
          loss_bwd(d, shape, x.data(), ti.data(), dx.data());
        } else {
          loss_bwd(d, shape, x.data(), tv.data(), dx.data());
        }
        const double h = 1e-6;
        for (size_t i = 0; i < x.size(); ++i) {
          std::vector<double> xp = x, xm = x;
          xp[i] += h;
          xm[i] -= h;
          EXPECT_NEAR(dx[i], (f(xp) - f(xm)) / (2 * h), 1e-7)
              << to_string(kind) << " " << to_string(r) << " " << shape
              << " element " << i;
        }
      }
    }
  }
}

TEST(ReferenceLoss, BadInputThrows) {
  const LossDesc ce = LossDesc::make(LossKind::kCrossEntropyIndices);
  const std::vector<double> x(8, 0.0);
  const std::vector<std::int64_t> bad = {0, 1, 2, 0};
  try {
    loss_fwd(ce, kTwoSamples, x.data(), bad.data(), nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("class index 2 outside [0, 2)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(loss_fwd(ce, kTwoSamples, x.data(), x.data(), nullptr), Error);
  LossDesc mse = LossDesc::make(LossKind::kMeanSquaredError);
  EXPECT_THROW(loss_fwd(mse, kTwoSamples, x.data(), bad.data(), nullptr),
               Error);
  mse.ignore_index = 0;
  EXPECT_THROW(loss_fwd(mse, kTwoSamples, x.data(), x.data(), nullptr), Error);
  EXPECT_THROW(loss_fwd(ce, Shape{2, 0, 1, 2}, x.data(), bad.data(), nullptr),
               Error);
  EXPECT_THROW(loss_fwd(ce, Shape{2, 2, 4}, x.data(), bad.data(), nullptr),
               Error);
}

}  // namespace
}  // namespace distconv::reference
