// LocalInterpolate on random taps and embedded views of either storage
// order: fp32 and fp64 against a plain sum over each output's corners;
// backward_into (every type) bit for bit backward() from zero, rounded;
// bf16 and fp16 views read and written as they are, bit for bit what the
// fp32 loops give on the widened values (forward: then rounded to the
// type; backward: into the same fp32 gradient).
#include "kernels/local_interpolate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "distconv/element_types.h"
#include "kernels/view_testing.h"
#include "tests/gtest_types.h"

namespace distconv {
namespace {

// Taps of one dimension: `out` outputs reading cells of [0, in), a few
// weights 0 (corners left out) and 1.
LocalTaps random_taps(Index out, Index in, std::mt19937_64& rng) {
  std::uniform_int_distribution<Index> cell(0, in - 1);
  std::uniform_real_distribution<double> weight(0.0, 1.0);
  LocalTaps t;
  for (Index o = 0; o < out; ++o) {
    t.i0.push_back(cell(rng));
    t.i1.push_back(cell(rng));
    const double w = o % 5 == 0 ? 0.0 : o % 7 == 0 ? 1.0 : weight(rng);
    t.w0.push_back(1.0 - w);
    t.w1.push_back(w);
  }
  return t;
}

struct Problem {
  Shape in, out;
  std::vector<LocalTaps> taps;
};

std::vector<Problem> problems(std::mt19937_64& rng) {
  std::vector<Problem> ps;
  for (const auto& [in, out] : std::vector<std::pair<Shape, Shape>>{
           {{2, 5, 4, 3}, {2, 5, 7, 6}},
           {{1, 16, 3, 5}, {1, 16, 6, 2}},
           {{1, 3, 2, 3, 4}, {1, 3, 4, 5, 3}},
           {{2, 1, 1, 4}, {2, 1, 3, 8}},
           // More input rows than the
           // 16-bit loops widen at once.
           {{1, 4, 12, 5}, {1, 4, 23, 9}},
           {{2, 2, 3, 5, 4}, {2, 2, 5, 9, 7}}}) {
    Problem p{in, out, {}};
    for (int d = 2; d < in.ndims(); ++d) {
      p.taps.push_back(random_taps(out[d], in[d], rng));
    }
    ps.push_back(p);
  }
  return ps;
}

// Output (n, c, o...)'s value: the weighted corners, summed in double.
double corner_sum(const Problem& p, const std::vector<double>& x,
                  const Shape& o) {
  const int k = static_cast<int>(p.taps.size());
  double sum = 0;
  for (int mask = 0; mask < (1 << k); ++mask) {
    Shape at = o;
    double w = 1;
    for (int d = 0; d < k; ++d) {
      const bool high = (mask >> (k - 1 - d)) & 1;
      const LocalTaps& t = p.taps[d];
      at[d + 2] = high ? t.i1[o[d + 2]] : t.i0[o[d + 2]];
      w *= high ? t.w1[o[d + 2]] : t.w0[o[d + 2]];
    }
    sum += w * x[linear_index(at, p.in)];
  }
  return sum;
}

// fn(problem, order) for every problem and both storage orders, under a
// trace naming the problem.
template <typename Fn>
void for_each_case(std::mt19937_64& rng, Fn fn) {
  for (const Problem& p : problems(rng)) {
    for (StorageOrder order :
         {StorageOrder::kChannelsLast, StorageOrder::kChannelsFirst}) {
      SCOPED_TRACE(p.in.to_string() + " -> " + p.out.to_string());
      fn(p, order);
    }
  }
}

template <typename T>
class LocalInterpolateTest : public ::testing::Test {};
TYPED_TEST_SUITE(LocalInterpolateTest, GtestTypes<ComputeTypeList>);

TYPED_TEST(LocalInterpolateTest, MatchesTheCornerSums) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  for_each_case(rng, [&](const Problem& p, StorageOrder order) {
    auto x = testing::embed<T>(p.in, rng, false, order);
    auto y = testing::embed<T>(p.out, rng, false, order);
    std::vector<double> xs(p.in.volume());
    std::uniform_real_distribution<double> value(-1, 1);
    x.view.for_each([&](const Shape& i, T& v) {
      v = T(value(rng));
      xs[linear_index(i, p.in)] = double(v);
    });
    LocalInterpolate<T>::forward(x.view, p.taps, y.view);
    y.view.for_each([&](const Shape& o, T& v) {
      const double want = corner_sum(p, xs, o);
      EXPECT_NEAR(double(v), want, 1e-6 * (1 + std::abs(want))) << o;
    });
    // backward is forward's adjoint: <y, dy> == <x, dx> (dx from 0).
    auto dy = testing::embed<T>(p.out, rng, false, order);
    std::vector<T> dx(p.in.volume(), T(0));
    dy.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
    LocalInterpolate<T>::backward(dy.view, p.taps,
                                  StridedView<T>::contiguous(dx.data(), p.in));
    double lhs = 0, rhs = 0;
    y.view.for_each([&](const Shape& o, T& v) {
      lhs += double(v) * double(std::as_const(dy.view)(o));
    });
    for (size_t i = 0; i < dx.size(); ++i) rhs += xs[i] * double(dx[i]);
    EXPECT_NEAR(lhs, rhs, 1e-5 * (1 + std::abs(lhs)));
  });
}

// Taps as linear interpolation makes them (half-pixel centres): output o
// reads floor(src) and the next cell, src = (o + 0.5) in / out - 0.5
// clamped to the input (the last cell twice at the edge), so they rise
// with o; a shrinking dimension skips cells no output reads.
LocalTaps linear_taps(Index out, Index in) {
  LocalTaps t;
  for (Index o = 0; o < out; ++o) {
    const double src = std::min<double>(
        std::max(0.0, (o + 0.5) * double(in) / double(out) - 0.5),
        double(in - 1));
    const Index i0 = static_cast<Index>(std::floor(src));
    const Index i1 = std::min(i0 + 1, in - 1);
    const double w1 = i1 == i0 ? 0.0 : src - double(i0);
    t.i0.push_back(i0);
    t.i1.push_back(i1);
    t.w0.push_back(1.0 - w1);
    t.w1.push_back(w1);
  }
  return t;
}

// Problems for backward_into: linear taps growing and shrinking (2D, 3D:
// the window of slices; 1D: the zeroed copy), and the random taps of
// problems() (the zeroed copy where they fall or jump).
std::vector<Problem> into_problems(std::mt19937_64& rng) {
  std::vector<Problem> ps = problems(rng);
  for (const auto& [in, out] :
       std::vector<std::pair<Shape, Shape>>{{{1, 16, 6, 5}, {1, 16, 12, 10}},
                                            {{2, 3, 12, 7}, {2, 3, 4, 3}},
                                            {{1, 4, 4, 3, 5}, {1, 4, 8, 6, 9}},
                                            {{1, 2, 9, 4, 4}, {1, 2, 3, 4, 4}},
                                            {{1, 5, 7}, {1, 5, 13}}}) {
    Problem p{in, out, {}};
    for (int d = 2; d < in.ndims(); ++d) {
      p.taps.push_back(linear_taps(out[d], in[d]));
    }
    ps.push_back(p);
  }
  return ps;
}

// Same bits (a 16-bit value's bits).
template <typename T>
bool same(T a, T b) {
  if constexpr (kNarrow<T>) {
    return a.bits() == b.bits();
  } else {
    return a == b;
  }
}

// backward_into writes every cell of dx (which held other values) with
// what backward() sums into a zeroed Compute<T> array, rounded once; 2D
// and 3D channels-last gradients dense past their first spatial dimension
// take the window of two slices (its scratch holds two slices after).
TYPED_TEST(LocalInterpolateTest, BackwardIntoIsBackwardFromZeroRoundedOnce) {
  using T = TypeParam;
  using P = Compute<T>;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> value(-4, 4);
  for (const Problem& p : into_problems(rng)) {
    for (StorageOrder order :
         {StorageOrder::kChannelsLast, StorageOrder::kChannelsFirst}) {
      for (const bool dense : {true, false}) {
        SCOPED_TRACE(p.in.to_string() + " <- " + p.out.to_string() +
                     (dense ? " dense" : " embedded") +
                     (order == StorageOrder::kChannelsLast
                          ? " channels-last"
                          : " channels-first"));
        auto dy = testing::embed<T>(p.out, rng, dense, order);
        auto dx = testing::embed<T>(p.in, rng, dense, order);
        dy.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
        dx.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
        std::vector<P> want(p.in.volume(), P(0));
        LocalInterpolate<T>::backward(
            dy.view, p.taps, StridedView<P>::contiguous(want.data(), p.in));
        std::vector<P> scratch(3, P(7));
        for (int call = 0; call < 2; ++call) {  // the scratch kept
          LocalInterpolate<T>::backward_into(dy.view, p.taps, dx.view, scratch);
          int wrong = 0;
          dx.view.for_each([&](const Shape& i, T& v) {
            const T w = T(want[linear_index(i, p.in)]);
            if (!same(v, w) && wrong++ < 5) {
              ADD_FAILURE() << "call " << call << " at " << i << ": "
                            << double(v) << ", want " << double(w);
            }
          });
        }
        const bool linear = p.taps[0].i0.size() > 0 &&
                            p.taps[0].w0 == linear_taps(p.out[2], p.in[2]).w0;
        if (linear && dense && order == StorageOrder::kChannelsLast &&
            p.in.ndims() > 3) {
          const Index slice = p.in.volume() / (p.in[0] * p.in[2]);
          EXPECT_EQ(scratch.size(), static_cast<size_t>(2 * slice))
              << "the window of slices did not run";
        }
      }
    }
  }
}

template <typename T>
class NarrowInterpolateTest : public ::testing::Test {};
TYPED_TEST_SUITE(NarrowInterpolateTest, GtestTypes<NarrowTypeList>);

TYPED_TEST(NarrowInterpolateTest, BitsOfTheFloatLoops) {
  using N = TypeParam;
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<float> value(-4, 4);
  for_each_case(rng, [&](const Problem& p, StorageOrder order) {
    auto xn = testing::embed<N>(p.in, rng, false, order);
    auto dyn = testing::embed<N>(p.out, rng, false, order);
    xn.view.for_each([&](const Shape&, N& v) { v = N(value(rng)); });
    dyn.view.for_each([&](const Shape&, N& v) { v = N(value(rng)); });
    std::vector<float> xf(p.in.volume()), dyf(p.out.volume());
    copy_view<N, float>(xn.view,
                        StridedView<float>::contiguous(xf.data(), p.in));
    copy_view<N, float>(dyn.view,
                        StridedView<float>::contiguous(dyf.data(), p.out));
    // Forward: N's output == the fp32 output rounded to N.
    auto yn = testing::embed<N>(p.out, rng, false, order);
    std::vector<float> yf(p.out.volume());
    LocalInterpolate<N>::forward(xn.view, p.taps, yn.view);
    LocalInterpolate<float>::forward(
        StridedView<const float>::contiguous(xf.data(), p.in), p.taps,
        StridedView<float>::contiguous(yf.data(), p.out));
    yn.view.for_each([&](const Shape& o, N& v) {
      EXPECT_EQ(v.bits(), N(yf[linear_index(o, p.out)]).bits()) << o;
    });
    // Backward into fp32 gradients holding the same values first.
    std::vector<float> dx_n(p.in.volume()), dx_f;
    for (float& v : dx_n) v = value(rng);
    dx_f = dx_n;
    LocalInterpolate<N>::backward(
        dyn.view, p.taps, StridedView<float>::contiguous(dx_n.data(), p.in));
    LocalInterpolate<float>::backward(
        StridedView<const float>::contiguous(dyf.data(), p.out), p.taps,
        StridedView<float>::contiguous(dx_f.data(), p.in));
    for (size_t i = 0; i < dx_n.size(); ++i) {
      EXPECT_EQ(dx_n[i], dx_f[i]) << i;
    }
  });
}

}  // namespace
}  // namespace distconv
