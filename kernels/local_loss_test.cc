// LocalLoss against the reference losses on views inside halos and dense
// ones, fp32 and fp64, every kind: the per-sample sums give the reference's
// per-sample and total losses, the gradient (alone, or with the sums in
// one pass) the reference's, and bad class indices are counted.
#include "kernels/local_loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/reference/loss.h"
#include "kernels/view_testing.h"

namespace distconv {
namespace {

template <typename T>
class LocalLossTest : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LocalLossTest, Types);

// The view's elements in row-major order.
template <typename V>
std::vector<V> row_major(const StridedView<V>& v) {
  std::vector<V> out;
  v.for_each([&](const Shape&, V& e) { out.push_back(e); });
  return out;
}

template <typename T, typename Target>
void check(const LossDesc& desc, const Shape& shape, bool dense,
           std::mt19937_64& rng) {
  SCOPED_TRACE(::testing::Message()
               << to_string(desc.kind) << " " << shape << " dense " << dense);
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  const Shape target_shape = desc.target_shape(shape);
  testing::Embedded<T> x = testing::embed<T>(shape, rng, dense);
  testing::Embedded<Target> t =
      testing::embed<Target>(target_shape, rng, dense);
  testing::Embedded<T> dx = testing::embed<T>(shape, rng, dense);
  std::uniform_real_distribution<double> value(-2, 2);
  x.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
  const Index classes = shape[1];
  t.view.for_each([&](const Shape&, Target& v) {
    if constexpr (std::is_integral_v<Target>) {
      v = std::uniform_int_distribution<Target>(0, classes - 1)(rng);
    } else {
      v = Target(std::abs(value(rng)));
    }
  });
  const std::vector<T> xs = row_major(x.view);
  const std::vector<Target> ts = row_major(t.view);
  const Index n = shape[0];
  std::vector<double> per_sample(n);
  LossDesc sum = desc;
  sum.reduction = LossReduction::kSum;
  const double total =
      reference::loss_fwd(sum, shape, xs.data(), ts.data(), per_sample.data());

  const LossCellDesc cells = loss_cell_desc(desc, classes);
  const std::vector<double> sums = LocalLoss<T, Target>::sums(
      cells, LossTerms::kLossesAndCounts, x.view, t.view);
  ASSERT_EQ(sums.size(), static_cast<size_t>(2 * n + 1));
  double all = 0;
  for (Index i = 0; i < n; ++i) {
    EXPECT_NEAR(sums[i], per_sample[i], tol * (1 + std::abs(per_sample[i])));
    all += sums[i];
  }
  EXPECT_NEAR(all, total, tol * (1 + std::abs(total)));
  EXPECT_EQ(sums[2 * n], 0);  // no bad index

  // The reference's gradient of the sum, i.e. w = 1.
  std::vector<T> want(shape.volume());
  reference::loss_bwd(sum, shape, xs.data(), ts.data(), want.data());
  LocalLoss<T, Target>::gradient(cells, 1.0, x.view, t.view, dx.view);
  const std::vector<T> got = row_major(dx.view);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(double(want[i]))));
  }
  // In one pass: the same sums and the same gradient, bit for bit.
  testing::Embedded<T> dx2 = testing::embed<T>(shape, rng, dense);
  const std::vector<double> fused = LocalLoss<T, Target>::sums_and_gradient(
      cells, 1.0, x.view, t.view, dx2.view);
  EXPECT_EQ(fused, sums);
  EXPECT_EQ(row_major(dx2.view), got);
}

TYPED_TEST(LocalLossTest, MatchesTheReferenceOnAnyView) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  for (bool dense : {true, false}) {
    for (const Shape& shape : {Shape{2, 4, 5, 3}, Shape{3, 3, 2, 4, 3}}) {
      check<T, std::int64_t>(LossDesc::make(LossKind::kCrossEntropyIndices),
                             shape, dense, rng);
      check<T, T>(LossDesc::make(LossKind::kCrossEntropyProbabilities), shape,
                  dense, rng);
      check<T, T>(LossDesc::make(LossKind::kMeanSquaredError), shape, dense,
                  rng);
    }
  }
}

TEST(LocalLoss, CountsBadAndIgnoredClassIndices) {
  LossDesc desc = LossDesc::make(LossKind::kCrossEntropyIndices);
  desc.ignore_index = -100;
  const Shape shape{2, 3, 1, 2};
  std::vector<double> x(shape.volume(), 0.5);
  // Sample 0: a counted index and a bad one; sample 1: ignored, counted.
  std::vector<std::int64_t> t = {1, 3, -100, 2};
  const std::vector<double> sums = LocalLoss<double, std::int64_t>::sums(
      loss_cell_desc(desc, 3), LossTerms::kCountsOnly,
      StridedView<const double>::contiguous(x.data(), shape),
      StridedView<const std::int64_t>::contiguous(t.data(), Shape{2, 1, 1, 2}));
  ASSERT_EQ(sums.size(), 5u);
  EXPECT_EQ(sums[2], 1);  // sample 0's count
  EXPECT_EQ(sums[3], 1);  // sample 1's count
  EXPECT_EQ(sums[4], 1);  // bad indices
}

}  // namespace
}  // namespace distconv
