// The reference pooling on cases worked by hand, and the adjoint identity of
// the averages.
#include "kernels/reference/pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace distconv::reference {
namespace {

TEST(ReferencePool, MaxTwoByTwoByHand) {
  const PoolDesc p = PoolDesc::make(PoolKind::kMax, {2, 2});
  const Shape x{1, 1, 4, 4}, y{1, 1, 2, 2};
  const std::vector<double> src = {1, 5, 2, 0,   //
                                   3, 4, 8, 1,   //
                                   0, 0, -1, -2,  //
                                   7, 0, -3, -4};
  std::vector<double> dst(4);
  pool_fwd(p, x, src.data(), y, dst.data());
  EXPECT_EQ(dst, (std::vector<double>{5, 8, 7, -1}));
  std::vector<double> dx(16);
  pool_bwd(p, x, src.data(), y, std::vector<double>{1, 2, 3, 4}.data(),
           dx.data());
  EXPECT_EQ(dx, (std::vector<double>{0, 1, 0, 0,  //
                                     0, 0, 2, 0,  //
                                     0, 0, 4, 0,  //
                                     3, 0, 0, 0}));
}

TEST(ReferencePool, MaxTiesGoToTheFirstCellAndPaddingNeverWins) {
  PoolDesc p = PoolDesc::make(PoolKind::kMax, {3, 3});
  p.stride = {1, 1};
  p.padding_lower = p.padding_upper = {1, 1};
  const Shape x{1, 1, 2, 2};
  const std::vector<float> src(4, -5.0f);  // all tied, below padding's 0
  std::vector<float> dst(4), dx(4);
  pool_fwd(p, x, src.data(), x, dst.data());
  EXPECT_EQ(dst, std::vector<float>(4, -5.0f));
  pool_bwd(p, x, src.data(), x, std::vector<float>{1, 1, 1, 1}.data(),
           dx.data());
  EXPECT_EQ(dx, (std::vector<float>{4, 0, 0, 0}));
}

TEST(ReferencePool, AveragesWithPaddingByHand) {
  PoolDesc p = PoolDesc::make(PoolKind::kAverageIncludePadding, {3, 3});
  p.stride = {2, 2};
  p.padding_lower = p.padding_upper = {1, 1};
  const Shape x{1, 1, 3, 3}, y{1, 1, 2, 2};
  const std::vector<double> ones(9, 1.0);
  std::vector<double> dst(4);
  pool_fwd(p, x, ones.data(), y, dst.data());
  EXPECT_EQ(dst, std::vector<double>(4, 4.0 / 9));  // 4 cells of 9
  p.kind = PoolKind::kAverageExcludePadding;
  pool_fwd(p, x, ones.data(), y, dst.data());
  EXPECT_EQ(dst, std::vector<double>(4, 1.0));
  std::vector<double> dx(9);
  pool_bwd<double>(p, x, nullptr, y, std::vector<double>{4, 8, 12, 16}.data(),
           dx.data());
  // Each output's gradient is shared by its 4 cells; the centre row and
  // column are read by two or four outputs.
  EXPECT_EQ(dx, (std::vector<double>{1, 3, 2,   //
                                     4, 10, 6,  //
                                     3, 7, 4}));
}

TEST(ReferencePool, ThreeDimensionalAverage) {
  PoolDesc p = PoolDesc::make(PoolKind::kAverageExcludePadding, {2, 1, 2});
  const Shape x{1, 1, 2, 1, 2}, y{1, 1, 1, 1, 1};
  const std::vector<double> src = {1, 2, 3, 6};
  std::vector<double> dst(1);
  pool_fwd(p, x, src.data(), y, dst.data());
  EXPECT_EQ(dst[0], 3.0);
}

// <pool(x), y> == <x, pool_bwd(y)> for the averages (linear maps).
TEST(ReferencePool, AveragesAreAdjoint) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> val(-1, 1);
  for (PoolKind kind :
       {PoolKind::kAverageIncludePadding, PoolKind::kAverageExcludePadding}) {
    PoolDesc p = PoolDesc::make(kind, {3, 2, 2});
    p.stride = {2, 1, 2};
    p.padding_lower = {1, 1, 0};
    p.padding_upper = {2, 0, 1};
    const Shape x{2, 3, 7, 5, 6};
    const Shape y = p.dst_shape(x);
    std::vector<double> a(x.volume()), b(y.volume()), pa(y.volume()),
        tb(x.volume());
    for (double& v : a) v = val(rng);
    for (double& v : b) v = val(rng);
    pool_fwd(p, x, a.data(), y, pa.data());
    pool_bwd(p, x, a.data(), y, b.data(), tb.data());
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < pa.size(); ++i) lhs += pa[i] * b[i];
    for (size_t i = 0; i < a.size(); ++i) rhs += a[i] * tb[i];
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(lhs)) << to_string(kind);
  }
}

}  // namespace
}  // namespace distconv::reference
