// upsample_forward and upsample_backward against the reference loops on views
// embedded in halos (either storage order) and dense ones, 1D to 3D, fp32 and
// fp64: the interiors equal the reference exactly, nothing outside them is
// written.
#include "kernels/local_upsample.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/reference/upsample.h"
#include "kernels/view_testing.h"

namespace distconv {
namespace {

template <typename T>
class LocalUpsampleTest : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LocalUpsampleTest, Types);

// The buffer's cells outside the view still hold embed()'s -7.
template <typename T>
Index outside_written(const testing::Embedded<T>& e) {
  Index sentinels = 0;
  for (T v : e.buffer) sentinels += v == T(-7);
  return static_cast<Index>(e.buffer.size()) - e.view.size() - sentinels;
}

TYPED_TEST(LocalUpsampleTest, MatchesTheReferenceOnAnyView) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 24; ++trial) {
    const int k = 1 + trial % 3;
    Shape src = Shape::filled(2 + k, 0), factors = Shape::filled(k, 0);
    src[0] = u(1, 2);
    src[1] = u(1, 5);
    for (int d = 0; d < k; ++d) {
      src[2 + d] = u(1, 4);
      factors[d] = u(1, 3);
    }
    const UpsampleDesc desc{factors};
    const Shape dst = desc.dst_shape(src);
    const bool dense = trial % 4 == 0;
    const StorageOrder order =
        trial % 2 ? StorageOrder::kChannelsFirst : StorageOrder::kChannelsLast;
    SCOPED_TRACE(::testing::Message() << "src " << src << " factors " << factors
                                      << " dense " << dense);
    testing::Embedded<T> x = testing::embed<T>(src, rng, dense, order);
    testing::Embedded<T> y = testing::embed<T>(dst, rng, dense);
    std::uniform_real_distribution<double> value(-1, 1);
    x.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
    const UpsampleFactors f = upsample_factors(factors);

    upsample_forward<T>(Exec<HostSpace>(), f, x.view, y.view);
    const std::vector<T> xs = testing::dense_of(x.view);
    std::vector<T> want(dst.volume());
    reference::upsample_fwd(desc, src, xs.data(), want.data());
    EXPECT_EQ(testing::dense_of(y.view), want);
    EXPECT_EQ(outside_written(y), 0);

    y.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
    testing::Embedded<T> dx = testing::embed<T>(src, rng, dense, order);
    upsample_backward<T>(Exec<HostSpace>(), f, y.view, dx.view);
    const std::vector<T> dys = testing::dense_of(y.view);
    std::vector<T> want_dx(src.volume());
    reference::upsample_bwd(desc, src, dys.data(), want_dx.data());
    EXPECT_EQ(testing::dense_of(dx.view), want_dx);
    EXPECT_EQ(outside_written(dx), 0);
  }
}

TYPED_TEST(LocalUpsampleTest, EmptyViewsWriteNothing) {
  using T = TypeParam;
  std::vector<T> x(4, T(1)), y(16, T(-7));
  const UpsampleFactors f = upsample_factors(Shape{2, 2});
  upsample_forward<T>(
      Exec<HostSpace>(), f,
      StridedView<const T>::contiguous(x.data(), Shape{0, 1, 2, 2}),
      StridedView<T>::contiguous(y.data(), Shape{0, 1, 4, 4}));
  for (T v : y) EXPECT_EQ(v, T(-7));
}

}  // namespace
}  // namespace distconv
