// The reference linear interpolation on cases worked by hand (PyTorch's
// values), and the adjoint identity.
#include "kernels/reference/interpolate.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace distconv::reference {
namespace {

InterpolateDesc sized(Shape size, AlignCorners a = AlignCorners::kNo) {
  InterpolateDesc d = InterpolateDesc::of_size(size);
  d.align_corners = a;
  return d;
}

// F.interpolate(torch.tensor([[[0., 4.]]]), size=4, mode='linear'):
// sources -0.25 (clamped to 0), 0.25, 0.75, 1.25 (its corners clamped).
TEST(ReferenceInterpolate, LinearByHand) {
  const std::vector<double> src = {0, 4};
  std::vector<double> dst(4);
  interpolate_fwd(sized({4}), Shape{1, 1, 2}, src.data(), dst.data());
  EXPECT_EQ(dst, (std::vector<double>{0, 1, 3, 4}));
  // Aligned corners: sources 0, 1/3, 2/3, 1.
  interpolate_fwd(sized({4}, AlignCorners::kYes), Shape{1, 1, 2}, src.data(),
                  dst.data());
  EXPECT_NEAR(dst[1], 4.0 / 3.0, 1e-15);
  EXPECT_NEAR(dst[2], 8.0 / 3.0, 1e-15);
  EXPECT_EQ(dst[3], 4.0);
  // The gradient of each output goes to its corners, by their weights.
  const std::vector<double> dy = {1, 1, 1, 1};
  std::vector<double> dx(2);
  interpolate_bwd(sized({4}), Shape{1, 1, 2}, dy.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<double>{1 + 0.75 + 0.25, 0.25 + 0.75 + 1}));
}

// Bilinear 2x2 -> 3x3 with aligned corners: the centre is the mean.
TEST(ReferenceInterpolate, BilinearByHand) {
  const std::vector<float> src = {1, 2, 3, 4};
  std::vector<float> dst(9);
  interpolate_fwd(sized({3, 3}, AlignCorners::kYes), Shape{1, 1, 2, 2},
                  src.data(), dst.data());
  EXPECT_EQ(dst, (std::vector<float>{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
}

// <fwd(x), dy> == <x, bwd(dy)> in 1D, 2D and 3D, up and down.
TEST(ReferenceInterpolate, BackwardIsTheAdjoint) {
  struct Case {
    Shape src;
    InterpolateDesc desc;
  };
  for (const Case& c :
       {Case{{2, 3, 7}, sized({12})}, Case{{1, 2, 5, 4}, sized({10, 3})},
        Case{{1, 2, 3, 4, 2}, sized({6, 8, 5}, AlignCorners::kYes)}}) {
    const Shape dst_shape = c.desc.dst_shape(c.src);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> x(c.src.volume()), dy(dst_shape.volume());
    for (double& v : x) v = u(rng);
    for (double& v : dy) v = u(rng);
    std::vector<double> y(dy.size()), dx(x.size());
    interpolate_fwd(c.desc, c.src, x.data(), y.data());
    interpolate_bwd(c.desc, c.src, dy.data(), dx.data());
    double left = 0, right = 0;
    for (size_t i = 0; i < y.size(); ++i) left += y[i] * dy[i];
    for (size_t i = 0; i < x.size(); ++i) right += x[i] * dx[i];
    EXPECT_NEAR(left, right, 1e-12) << c.src;
  }
}

}  // namespace
}  // namespace distconv::reference
