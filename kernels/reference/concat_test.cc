// The reference concatenation and slicing on cases worked by hand, and the
// adjoint identities.
#include "kernels/reference/concat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "distconv/error.h"

namespace distconv::reference {
namespace {

TEST(ReferenceConcat, TwoInputsByHand) {
  // (2, 1, 1, 2) and (2, 2, 1, 2): per sample, a's channel then b's two.
  const std::vector<double> a = {1, 2, 3, 4};
  const std::vector<double> b = {10, 20, 30, 40, 50, 60, 70, 80};
  std::vector<double> y(12);
  concat_channels<double>({{2, 1, 1, 2}, {2, 2, 1, 2}}, {a.data(), b.data()},
                          y.data());
  EXPECT_EQ(y, (std::vector<double>{1, 2, 10, 20, 30, 40,  //
                                    3, 4, 50, 60, 70, 80}));
  std::vector<double> back(8);
  slice_channels<double>({2, 3, 1, 2}, 1, 3, y.data(), back.data());
  EXPECT_EQ(back, b);
  std::vector<double> d(12);
  unslice_channels<double>({2, 3, 1, 2}, 1, 3, b.data(), d.data());
  EXPECT_EQ(d, (std::vector<double>{0, 0, 10, 20, 30, 40,  //
                                    0, 0, 50, 60, 70, 80}));
}

TEST(ReferenceConcat, RejectsBadInput) {
  const std::vector<float> a(8), b(8);
  std::vector<float> y(16);
  EXPECT_THROW(concat_channels<float>({{1, 2, 2, 2}, {1, 2, 2, 1}},
                                      {a.data(), b.data()}, y.data()),
               Error);
  EXPECT_THROW(concat_channels<float>({{1, 2, 2, 2}, {1, 2, 2, 2, 1}},
                                      {a.data(), b.data()}, y.data()),
               Error);
  EXPECT_THROW(slice_channels<float>({1, 2, 2, 2}, 1, 3, a.data(), y.data()),
               Error);
  EXPECT_THROW(slice_channels<float>({1, 2, 2, 2}, 2, 1, a.data(), y.data()),
               Error);
}

// <slice(x), y> == <x, unslice(y)>, and concat is the sum of the pieces'
// unslices' adjoints, on a 3D shape.
TEST(ReferenceConcat, SliceAndConcatAreAdjoint) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> val(-1, 1);
  auto random = [&](Index n) {
    std::vector<double> v(n);
    for (double& x : v) x = val(rng);
    return v;
  };
  const Shape s{2, 7, 3, 2, 4};
  const Shape piece{2, 3, 3, 2, 4};
  const auto x = random(s.volume()), y = random(piece.volume());
  std::vector<double> sx(piece.volume()), uy(s.volume());
  slice_channels<double>(s, 2, 5, x.data(), sx.data());
  unslice_channels<double>(s, 2, 5, y.data(), uy.data());
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < sx.size(); ++i) lhs += sx[i] * y[i];
  for (size_t i = 0; i < x.size(); ++i) rhs += x[i] * uy[i];
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(lhs));
  // Concatenating the slices [0, 2), [2, 5), [5, 7) gives x back.
  std::vector<std::vector<double>> parts;
  const Index cuts[] = {0, 2, 5, 7};
  std::vector<Shape> shapes;
  std::vector<const double*> ptrs;
  for (int i = 0; i < 3; ++i) {
    Shape p = s;
    p[1] = cuts[i + 1] - cuts[i];
    shapes.push_back(p);
    parts.emplace_back(p.volume());
    slice_channels<double>(s, cuts[i], cuts[i + 1], x.data(),
                           parts.back().data());
  }
  for (const auto& p : parts) ptrs.push_back(p.data());
  std::vector<double> joined(s.volume());
  concat_channels<double>(shapes, ptrs, joined.data());
  EXPECT_EQ(joined, x);
}

}  // namespace
}  // namespace distconv::reference
