// The reference upsampling on cases worked by hand, and the adjoint
// identity.
#include "kernels/reference/upsample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "distconv/error.h"

namespace distconv::reference {
namespace {

TEST(ReferenceUpsample, TwoByThreeByHand) {
  const UpsampleDesc up{{2, 3}};
  const Shape x{1, 1, 2, 2};
  const std::vector<double> src = {1, 2, 3, 4};
  std::vector<double> dst(24);
  upsample_fwd(up, x, src.data(), dst.data());
  EXPECT_EQ(dst, (std::vector<double>{1, 1, 1, 2, 2, 2,  //
                                      1, 1, 1, 2, 2, 2,  //
                                      3, 3, 3, 4, 4, 4,  //
                                      3, 3, 3, 4, 4, 4}));
  std::vector<double> dy(24);
  for (int i = 0; i < 24; ++i) dy[i] = i;
  std::vector<double> dx(4);
  upsample_bwd(up, x, dy.data(), dx.data());
  // Block sums: rows {0, 1} x columns {0, 1, 2}, and so on.
  EXPECT_EQ(dx, (std::vector<double>{0 + 1 + 2 + 6 + 7 + 8,      //
                                     3 + 4 + 5 + 9 + 10 + 11,    //
                                     12 + 13 + 14 + 18 + 19 + 20,  //
                                     15 + 16 + 17 + 21 + 22 + 23}));
}

TEST(ReferenceUpsample, OneDimensionalAndChannels) {
  const UpsampleDesc up{{3}};
  const std::vector<float> src = {1, 2, 5, 6};  // (1, 2, 2)
  std::vector<float> dst(12);
  upsample_fwd(up, {1, 2, 2}, src.data(), dst.data());
  EXPECT_EQ(dst, (std::vector<float>{1, 1, 1, 2, 2, 2, 5, 5, 5, 6, 6, 6}));
  EXPECT_THROW(upsample_fwd(UpsampleDesc{{0}}, {1, 2, 2}, src.data(),
                            dst.data()),
               Error);
}

TEST(ReferenceUpsample, BackwardIsTheAdjoint) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> val(-1, 1);
  const UpsampleDesc up{{2, 1, 3}};
  const Shape x{2, 3, 3, 4, 2};
  const Shape y = up.dst_shape(x);
  std::vector<double> a(x.volume()), b(y.volume()), ua(y.volume()),
      tb(x.volume());
  for (double& v : a) v = val(rng);
  for (double& v : b) v = val(rng);
  upsample_fwd(up, x, a.data(), ua.data());
  upsample_bwd(up, x, b.data(), tb.data());
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < ua.size(); ++i) lhs += ua[i] * b[i];
  for (size_t i = 0; i < a.size(); ++i) rhs += a[i] * tb[i];
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(lhs));
}

}  // namespace
}  // namespace distconv::reference
