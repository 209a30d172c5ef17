// LocalSoftmax against the reference loops: oneDNN on dense channels-last
// fp32 views, the cell loops on views inside halos, channels-first ones and
// fp64; describe() says which.
#include "kernels/local_softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference/softmax.h"
#include "kernels/view_testing.h"

namespace distconv {
namespace {

template <typename T>
class LocalSoftmaxTest : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LocalSoftmaxTest, Types);

template <typename T>
void expect_near(const std::vector<T>& have, const std::vector<T>& want) {
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  ASSERT_EQ(have.size(), want.size());
  for (size_t i = 0; i < have.size(); ++i) {
    EXPECT_NEAR(have[i], want[i], tol * (1 + std::abs(double(want[i]))))
        << "at " << i;
  }
}

TYPED_TEST(LocalSoftmaxTest, MatchesTheReferenceOnAnyView) {
  using T = TypeParam;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> value(-3, 3);
  for (SoftmaxKind kind : {SoftmaxKind::kSoftmax, SoftmaxKind::kLogSoftmax}) {
    for (int trial = 0; trial < 6; ++trial) {
      const Shape shape = trial % 2 ? Shape{2, 5, 3, 4, 2} : Shape{3, 7, 4, 5};
      const bool dense = trial < 2;
      const StorageOrder order = trial == 4 ? StorageOrder::kChannelsFirst
                                            : StorageOrder::kChannelsLast;
      SCOPED_TRACE(::testing::Message()
                   << to_string(kind) << " " << shape << " dense " << dense);
      testing::Embedded<T> x = testing::embed<T>(shape, rng, dense, order);
      testing::Embedded<T> y = testing::embed<T>(shape, rng, dense, order);
      testing::Embedded<T> dy = testing::embed<T>(shape, rng, dense, order);
      testing::Embedded<T> dx = testing::embed<T>(shape, rng, dense, order);
      x.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
      dy.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
      const LocalSoftmax<T> s(kind, shape);
      const std::string how = s.describe();
      if (sizeof(T) == 4) {  // oneDNN made, for the dense views
        EXPECT_EQ(how.rfind("loops", 0), std::string::npos) << how;
      } else {
        EXPECT_EQ(how, "loops in double");
      }
      s.forward(x.view, y.view);
      const std::vector<T> xs = testing::dense_of(x.view);
      std::vector<T> want(shape.volume());
      reference::softmax_fwd(kind, shape, xs.data(), want.data());
      const std::vector<T> ys = testing::dense_of(y.view);
      expect_near(ys, want);

      s.backward(y.view, dy.view, dx.view);
      const std::vector<T> dys = testing::dense_of(dy.view);
      std::vector<T> want_dx(shape.volume());
      reference::softmax_bwd(kind, shape, ys.data(), dys.data(),
                             want_dx.data());
      expect_near(testing::dense_of(dx.view), want_dx);
    }
  }
}

TEST(LocalSoftmax, ViewsOfAnotherExtentRunTheLoops) {
  const LocalSoftmax<float> s(SoftmaxKind::kSoftmax, Shape{1, 4, 3, 3});
  const Shape shape{2, 4, 3, 3};  // dense, but not what oneDNN was made for
  std::mt19937_64 rng(9);
  testing::Embedded<float> x = testing::embed<float>(shape, rng, true);
  testing::Embedded<float> y = testing::embed<float>(shape, rng, true);
  std::uniform_real_distribution<float> value(-3, 3);
  x.view.for_each([&](const Shape&, float& v) { v = value(rng); });
  s.forward(x.view, y.view);
  const std::vector<float> xs = testing::dense_of(x.view);
  std::vector<float> want(shape.volume());
  reference::softmax_fwd(SoftmaxKind::kSoftmax, shape, xs.data(),
                         want.data());
  expect_near(testing::dense_of(y.view), want);
}

TEST(LocalSoftmax, EmptyExtentRunsTheLoops) {
  const LocalSoftmax<float> s(SoftmaxKind::kSoftmax, Shape{0, 4, 3, 3});
  EXPECT_EQ(s.describe(), "loops in double");
  std::vector<float> y(1, -7.0f);
  s.forward(StridedView<const float>::contiguous(nullptr, Shape{0, 4, 3, 3}),
            StridedView<float>::contiguous(y.data(), Shape{0, 4, 3, 3}));
  EXPECT_EQ(y[0], -7.0f);
}

}  // namespace
}  // namespace distconv
