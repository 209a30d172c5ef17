// LocalPool against the reference pooling on random pieces embedded in
// larger channels-last buffers (and dense), float and double.
#include "kernels/local_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "distconv/halo_layout.h"
#include "kernels/copy_view.h"
#include "kernels/reference/pool.h"
#include "kernels/view_testing.h"

namespace distconv {
namespace {

using testing::dense_of;
using testing::embed;
using testing::Embedded;

// Each piece run by `impl` (unset: the heuristic's), whose implementation()
// holds `want_impl`.
template <typename T>
void CheckRandomPieces(double tol, const char* want_impl,
                       std::optional<PoolImpl> impl = std::nullopt) {
  std::mt19937_64 rng(11);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  int ran = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const auto problem = testing::random_pool_problem(rng, 5, 7);
    if (!problem) continue;
    const auto& [p, src] = *problem;
    ++ran;
    const Shape dst = p.dst_shape(src);
    const bool dense = u(0, 1);
    Embedded<T> x = embed<T>(src, rng, dense), y = embed<T>(dst, rng, dense);
    // diff_src has src's strides (what the plan was made for).
    Embedded<T> dx = x;
    const auto at = x.view.data() - x.buffer.data();
    dx.view = StridedView<T>(dx.buffer.data() + at, src, x.view.strides());
    // Few distinct values, so max pooling meets ties.
    x.view.for_each([&](const Shape&, T& v) { v = T(u(-2, 2)); });
    const std::vector<T> x0 = dense_of(x.view);
    LocalPool<T> pool(p, src, x.view.strides(), dst, y.view.strides(), {},
                      impl);
    SCOPED_TRACE(std::string(to_string(p.kind)) + ", " +
                 pool.implementation());
    EXPECT_NE(pool.implementation().find(want_impl), std::string::npos);
    if (std::is_same_v<T, float>) {  // oneDNN takes every such problem
      EXPECT_EQ(pool.impl(), impl.value_or(heuristic_pool_impl(p)));
    } else {
      EXPECT_EQ(pool.impl(), PoolImpl::kReference);
    }
    pool.forward(x.view, y.view);
    std::vector<T> want(dst.volume());
    reference::pool_fwd<T>(p, src, x0.data(), dst, want.data());
    const std::vector<T> got = dense_of(y.view);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], tol) << "forward at " << i;
    }
    std::vector<T> dy(dst.volume()), want_dx(src.volume());
    for (T& v : dy) v = T(u(-50, 50)) / T(8);
    copy_view<T>(StridedView<const T>::contiguous(dy.data(), dst), y.view);
    reference::pool_bwd<T>(p, src, x0.data(), dst, dy.data(), want_dx.data());
    pool.backward(x.view, y.view, dx.view);
    const std::vector<T> got_dx = dense_of(dx.view);
    for (size_t i = 0; i < got_dx.size(); ++i) {
      ASSERT_NEAR(got_dx[i], want_dx[i], tol) << "backward at " << i;
    }
  }
  EXPECT_GT(ran, 100);
}

TEST(LocalPool, FloatMatchesTheReferenceIncludingTies) {
  CheckRandomPieces<float>(1e-5, "jit");
}

TEST(LocalPool, DoubleMatchesTheReference) {
  CheckRandomPieces<double>(1e-12, "reference");
}

// Every implementation of the list, asked for first.
TEST(LocalPool, EveryImplementationMatchesTheReference) {
  CheckRandomPieces<float>(1e-5, "slabs: jit", PoolImpl::kSlabs);
  CheckRandomPieces<float>(1e-5, "one_call: jit", PoolImpl::kOneCall);
  CheckRandomPieces<float>(1e-5, "reference", PoolImpl::kReference);
  // double: oneDNN's are left out, saying why.
  CheckRandomPieces<double>(1e-12, "slabs: oneDNN pooling here is fp32 only",
                            PoolImpl::kSlabs);
}

// Max pooling over NaN and -Inf, 3x3 windows, stride 2, padding 1, on
// 8x8, with PyTorch's rule as the brute force: a window holding a NaN
// gives NaN and sends its gradient to its last NaN (row-major); a window
// of -Inf only gives -Inf and sends its gradient to its first cell; the
// other windows are untouched by them. Float runs the reference loops for
// such an input (oneDNN skips NaNs and starts its maxima at the lowest
// finite float), and the next input without them runs oneDNN again. In
// place and staged.
template <typename T>
void CheckNanPropagates(bool dense) {
  std::mt19937_64 rng(5);
  PoolDesc p = PoolDesc::make(PoolKind::kMax, {3, 3});
  p.stride = {2, 2};
  p.padding_lower = p.padding_upper = {1, 1};
  const Shape src{1, 2, 8, 8}, dst = p.dst_shape(src);
  Embedded<T> x = embed<T>(src, rng, dense), y = embed<T>(dst, rng, dense);
  Embedded<T> dx = x;
  dx.view = StridedView<T>(dx.buffer.data() + (x.view.data() - x.buffer.data()),
                           src, x.view.strides());
  LocalPool<T> pool(p, src, x.view.strides(), dst, y.view.strides());
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  enum Input { kNanAndInf, kNumbers, kInfOnly };
  for (const Input input : {kNanAndInf, kNumbers, kInfOnly, kNanAndInf}) {
    SCOPED_TRACE(input == kNanAndInf ? "with NaN and -Inf"
                 : input == kInfOnly ? "with -Inf"
                                     : "numbers only");
    x.view.for_each([](const Shape& at, T& v) {  // distinct values
      v = T(at[2] * 8 + at[3]) / T(64) - T(at[1]);
    });
    if (input == kNanAndInf) {
      x.view(Shape{0, 0, 3, 5}) = nan;  // one NaN among numbers
      x.view(Shape{0, 0, 4, 5}) = nan;  // and a second in some windows
      for (Index h = 3; h <= 5; ++h) {  // output (2, 2)'s window, all NaN
        for (Index w = 3; w <= 5; ++w) x.view(Shape{0, 1, h, w}) = nan;
      }
    }
    if (input != kNumbers) {
      for (Index h = 0; h <= 1; ++h) {  // output (0, 0)'s window, all -Inf
        for (Index w = 0; w <= 1; ++w) x.view(Shape{0, 1, h, w}) = -inf;
      }
      x.view(Shape{0, 0, 7, 7}) = -inf;  // one -Inf among numbers
    }
    pool.forward(x.view, y.view);
    y.view.for_each([](const Shape&, T& v) { v = T(1); });  // dy
    pool.backward(x.view, y.view, dx.view);
    pool.forward(x.view, y.view);
    // Brute force: each window's pick and the gradient it sends there.
    std::vector<T> want_dx(src.volume(), T(0));
    for (Index c = 0; c < 2; ++c) {
      for (Index oh = 0; oh < dst[2]; ++oh) {
        for (Index ow = 0; ow < dst[3]; ++ow) {
          // PyTorch's loop: the first cell, replaced by any larger value
          // or NaN.
          Shape pick;
          T best = -inf;
          for (Index h = 2 * oh - 1; h <= 2 * oh + 1; ++h) {
            for (Index w = 2 * ow - 1; w <= 2 * ow + 1; ++w) {
              if (h < 0 || h >= 8 || w < 0 || w >= 8) continue;
              const Shape at{0, c, h, w};
              const T v = x.view(at);
              if (pick.ndims() == 0 || v > best || std::isnan(v)) {
                pick = at;
                best = v;
              }
            }
          }
          const bool found_nan = std::isnan(best);
          const T got = y.view(Shape{0, c, oh, ow});
          if (found_nan) {
            EXPECT_TRUE(std::isnan(got)) << "output " << c << "," << oh << ","
                                         << ow << " is " << got;
          } else {
            EXPECT_EQ(got, x.view(pick))
                << "output " << c << "," << oh << "," << ow;
          }
          want_dx[((c * 8) + pick[2]) * 8 + pick[3]] += T(1);
        }
      }
    }
    EXPECT_EQ(dense_of(dx.view), want_dx);
  }
}

TEST(LocalPool, NanPropagatesThroughMaxPooling) {
  for (const bool dense : {true, false}) {
    SCOPED_TRACE(dense ? "in place" : "staged");
    CheckNanPropagates<float>(dense);
    CheckNanPropagates<double>(dense);
  }
}

// Max pooling runs oneDNN in slabs of about 1 MiB of input, each checked
// right before it runs: a NaN in the second slab of a 1.25 MiB input
// stops oneDNN after the first, and the reference loops give the whole
// answer (forward and backward), as the double pooling does.
TEST(LocalPool, NanInALaterSlabRunsTheReference) {
  std::mt19937_64 rng(3);
  PoolDesc p = PoolDesc::make(PoolKind::kMax, {3, 3});
  p.stride = {2, 2};
  p.padding_lower = p.padding_upper = {1, 1};
  const Shape src{1, 16, 160, 128}, dst = p.dst_shape(src);
  Embedded<float> x = embed<float>(src, rng, true);
  Embedded<float> y = embed<float>(dst, rng, true);
  Embedded<float> dx = embed<float>(src, rng, true);
  Embedded<double> xd = embed<double>(src, rng, true);
  Embedded<double> yd = embed<double>(dst, rng, true);
  Embedded<double> dxd = embed<double>(src, rng, true);
  LocalPool<float> pool(p, src, x.view.strides(), dst, y.view.strides());
  LocalPool<double> exact(p, src, xd.view.strides(), dst, yd.view.strides());
  EXPECT_NE(pool.implementation().find("in place"), std::string::npos)
      << pool.implementation();
  for (const bool with_nan : {false, true, false}) {
    SCOPED_TRACE(with_nan ? "a NaN at row 150" : "numbers only");
    x.view.for_each([&](const Shape& at, float& v) {
      v = static_cast<float>((at[1] * 7 + at[2] * 3 + at[3] * 5) % 23);
    });
    if (with_nan) x.view(Shape{0, 5, 150, 7}) = std::nanf("");
    xd.view.for_each([&](const Shape& at, double& v) { v = x.view(at); });
    pool.forward(x.view, y.view);
    exact.forward(xd.view, yd.view);
    Index nans = 0;
    y.view.for_each([&](const Shape& at, float& v) {
      const double want = yd.view(at);
      nans += std::isnan(v);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(v));
      } else {
        EXPECT_EQ(v, want);
      }
      v = static_cast<float>((at[2] + at[3]) % 5);  // dy
      yd.view(at) = v;
    });
    EXPECT_EQ(nans, with_nan ? 2 : 0);  // output (75, 3) and (75, 4)
    pool.backward(x.view, y.view, dx.view);
    exact.backward(xd.view, yd.view, dxd.view);
    dx.view.for_each(
        [&](const Shape& at, float& v) { ASSERT_EQ(v, dxd.view(at)); });
  }
}

}  // namespace
}  // namespace distconv
