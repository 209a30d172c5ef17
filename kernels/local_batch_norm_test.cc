// LocalBatchNorm's passes against plain per-channel loops: channel counts
// around the vector width and the period, partial last chunks, arrays long
// enough for blocked sums and several tiles, empty arrays, outputs aliasing
// inputs; moments on large offsets against long double.
#include "kernels/local_batch_norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tests/gtest_types.h"

namespace distconv {
namespace {

template <typename T>
std::vector<T> random_values(Index n, unsigned seed, double offset) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng) + offset);
  return v;
}

std::vector<double> per_channel(Index channels, unsigned seed) {
  return random_values<double>(channels, seed, 0.5);
}

template <typename T>
void ExpectPassesMatchPlainLoops(Index channels, Index rows, double tol) {
  SCOPED_TRACE(::testing::Message()
               << channels << " channels x " << rows << " rows");
  const Index n = channels * rows;
  const auto x = random_values<T>(n, 1, 3.0), dy = random_values<T>(n, 2, 0);
  const auto mean = per_channel(channels, 3), a = per_channel(channels, 4);
  const auto b = per_channel(channels, 5), g = per_channel(channels, 6);
  std::vector<double> sum(channels), sq(channels), sdy(channels), sdd(channels);
  std::vector<double> want_sum(channels, 0), want_sq(channels, 0),
      want_sdy(channels, 0), want_sdd(channels, 0);
  std::vector<T> want_y(n), want_dx(n);
  for (Index i = 0; i < n; ++i) want_sum[i % channels] += double(x[i]);
  for (Index i = 0; i < n; ++i) {
    const Index c = i % channels;
    const double own = double(x[i]) - want_sum[c] / double(rows);
    want_sq[c] += own * own;
  }
  for (Index i = 0; i < n; ++i) {
    const Index c = i % channels;
    const double d = double(x[i]) - mean[c];
    want_sdy[c] += double(dy[i]);
    want_sdd[c] += double(dy[i]) * d;
    want_y[i] = static_cast<T>(d * a[c] + b[c]);
    want_dx[i] = static_cast<T>(a[c] * ((double(dy[i]) - b[c]) - d * g[c]));
  }
  LocalBatchNorm<T> k(channels);
  EXPECT_EQ(k.period() % channels, 0);
  k.moments(x.data(), n, sum.data(), sq.data());
  k.gradient_sums(x.data(), dy.data(), n, mean.data(), sdy.data(), sdd.data());
  for (Index c = 0; c < channels; ++c) {
    const double scale = std::max(1.0, double(rows));
    EXPECT_NEAR(sum[c], want_sum[c], 1e-13 * 4 * scale) << "channel " << c;
    EXPECT_NEAR(sq[c], want_sq[c], 1e-13 * scale) << "channel " << c;
    EXPECT_NEAR(sdy[c], want_sdy[c], 1e-13 * scale) << "channel " << c;
    EXPECT_NEAR(sdd[c], want_sdd[c], 1e-13 * scale) << "channel " << c;
  }
  std::vector<T> y(n), dx(n);
  k.affine(x.data(), n, mean.data(), a.data(), b.data(), y.data());
  k.diff_src(x.data(), dy.data(), n, mean.data(), a.data(), b.data(), g.data(),
             dx.data());
  for (Index i = 0; i < n; ++i) {
    ASSERT_NEAR(y[i], want_y[i],
                tol * 8 * std::max(1.0, std::abs(double(want_y[i]))))
        << "y at " << i;
    ASSERT_NEAR(dx[i], want_dx[i],
                tol * 8 * std::max(1.0, std::abs(double(want_dx[i]))))
        << "dx at " << i;
  }
  // In place: y over x, dx over dy and over x.
  std::vector<T> inout = x;
  k.affine(inout.data(), n, mean.data(), a.data(), b.data(), inout.data());
  EXPECT_EQ(inout, y);
  inout = dy;
  k.diff_src(x.data(), inout.data(), n, mean.data(), a.data(), b.data(),
             g.data(), inout.data());
  EXPECT_EQ(inout, dx);
  inout = x;
  k.diff_src(inout.data(), dy.data(), n, mean.data(), a.data(), b.data(),
             g.data(), inout.data());
  EXPECT_EQ(inout, dx);
}

TEST(LocalBatchNorm, PassesMatchPlainLoops) {
  for (Index channels : {1, 2, 3, 7, 8, 9, 16, 19, 64, 65, 130}) {
    for (Index rows : {0, 1, 5, 63, 64, 65, 257}) {
      ExpectPassesMatchPlainLoops<double>(channels, rows, 1e-15);
      ExpectPassesMatchPlainLoops<float>(channels, rows, 1e-7);
    }
  }
}

// More than 256 chunks (the block sums flush into the totals mid-way) and
// several tiles of moments(), the last one partial.
TEST(LocalBatchNorm, LongArrays) {
  ExpectPassesMatchPlainLoops<double>(3, 300 * 32 + 5, 1e-15);
  ExpectPassesMatchPlainLoops<float>(16, 256 * 4 * 3 + 1, 1e-7);
  ExpectPassesMatchPlainLoops<float>(5, 16384, 1e-7);
}

// moments() on `x` (value i in channel i % channels) against a
// long-double two-pass: the sums within `sum_tol`, the squared deviations
// within `m2_tol`, relative.
template <typename T>
void ExpectMomentsMatchTwoPass(const std::vector<T>& x, Index channels,
                               double sum_tol, double m2_tol) {
  const Index n = static_cast<Index>(x.size()), rows = n / channels;
  std::vector<long double> sum(channels, 0), m2(channels, 0);
  for (Index i = 0; i < n; ++i) sum[i % channels] += x[i];
  for (Index i = 0; i < n; ++i) {
    const long double d = x[i] - sum[i % channels] / rows;
    m2[i % channels] += d * d;
  }
  LocalBatchNorm<T> k(channels);
  std::vector<double> got_sum(channels), got_m2(channels);
  k.moments(x.data(), n, got_sum.data(), got_m2.data());
  for (Index c = 0; c < channels; ++c) {
    EXPECT_NEAR(got_sum[c], double(sum[c]),
                sum_tol * std::abs(double(sum[c])));
    EXPECT_NEAR(got_m2[c], double(m2[c]), m2_tol * double(m2[c]));
  }
}

// 1e4 + noise in [-1, 1), a million values per channel, 64 tiles: the
// moments agree with a long-double two-pass to double precision.
TEST(LocalBatchNorm, MomentsAreExactOnLargeOffsets) {
  const Index channels = 2, rows = 1 << 20;
  ExpectMomentsMatchTwoPass(random_values<float>(channels * rows, 9, 1e4),
                            channels, 1e-14, 1e-12);
}

// The first tile's shift is its first row; here that row is an outlier
// 1e5 away from values of spread 1 (the worst case of the shifted sums:
// cancellation of about (shift - mean)^2 / variance, in double). Later
// tiles shift by the mean so far. Still within 1e-10 of a long-double
// two-pass.
TEST(LocalBatchNorm, MomentsSurviveAnOutlierFirstRow) {
  const Index channels = 2, rows = 1 << 16;
  auto x = random_values<double>(channels * rows, 11, 0.0);
  x[0] = 1e5;
  x[1] = -1e5;
  ExpectMomentsMatchTwoPass(x, channels, 1e-12, 1e-10);
}

// Float's elementwise passes on 1e4 + noise in [-1, 1), normalised by the
// exact mean and deviation: the split means keep x - mean (and dy -
// dy_mean) at float precision. One float for the mean would be off by up
// to 5e-4 (half a float step at 1e4), 1e-3 of an output of unit variance.
TEST(LocalBatchNorm, FloatDeviationsKeepPrecisionOnLargeOffsets) {
  const Index channels = 3, rows = 4096, n = channels * rows;
  const auto x = random_values<float>(n, 12, 1e4);
  std::vector<double> mean(channels, 0), inv_std(channels, 0);
  for (Index i = 0; i < n; ++i) mean[i % channels] += x[i];
  for (double& m : mean) m /= double(rows);
  for (Index i = 0; i < n; ++i) {
    const double d = x[i] - mean[i % channels];
    inv_std[i % channels] += d * d;
  }
  for (double& s : inv_std) s = 1 / std::sqrt(s / double(rows));
  const std::vector<double> shift = {0, 1, -1};
  std::vector<float> y(n), dx(n);
  LocalBatchNorm<float> k(channels);
  k.affine(x.data(), n, mean.data(), inv_std.data(), shift.data(), y.data());
  // dx = -(x - mean) * inv_std as well, through the backward pass's form
  // (with dy = 1e4 + shift, dy_mean = 1e4: the same precision issue).
  std::vector<float> dy(n);
  for (Index i = 0; i < n; ++i) dy[i] = float(1e4 + shift[i % channels]);
  const std::vector<double> ones(channels, 1.0), dy_mean(channels, 1e4);
  k.diff_src(x.data(), dy.data(), n, mean.data(), ones.data(), dy_mean.data(),
             inv_std.data(), dx.data());
  double worst = 0;
  for (Index i = 0; i < n; ++i) {
    const Index c = i % channels;
    const double xhat = (double(x[i]) - mean[c]) * inv_std[c];
    worst = std::max(worst, std::abs(double(y[i]) - (xhat + shift[c])));
    worst = std::max(worst, std::abs(double(dx[i]) - (shift[c] - xhat)));
  }
  EXPECT_LT(worst, 1e-6);  // |y| <= about 2.7
}

// Non-temporal stores (forced by a zero threshold) give the same values as
// plain ones, on aligned and misaligned outputs, and not in place.
template <typename T>
void ExpectStreamingChangesNothing() {
  const Index channels = 5, n = channels * 1000 + 3 * channels;
  const auto x = random_values<T>(n, 13, 1.0), dy = random_values<T>(n, 14, 0);
  const auto mean = per_channel(channels, 15), a = per_channel(channels, 16);
  const auto b = per_channel(channels, 17), g = per_channel(channels, 18);
  LocalBatchNorm<T> k(channels);
  std::vector<T> y_plain(n), dx_plain(n), y(n + 1), dx(n + 1);
  k.affine(x.data(), n, mean.data(), a.data(), b.data(), y_plain.data());
  k.diff_src(x.data(), dy.data(), n, mean.data(), a.data(), b.data(), g.data(),
             dx_plain.data());
  k.set_streaming_threshold(0);
  for (int offset : {0, 1}) {
    k.affine(x.data(), n, mean.data(), a.data(), b.data(), y.data() + offset);
    k.diff_src(x.data(), dy.data(), n, mean.data(), a.data(), b.data(),
               g.data(), dx.data() + offset);
    EXPECT_TRUE(std::equal(y_plain.begin(), y_plain.end(), y.begin() + offset));
    EXPECT_TRUE(
        std::equal(dx_plain.begin(), dx_plain.end(), dx.begin() + offset));
  }
}

TEST(LocalBatchNorm, StreamingStoresChangeNothing) {
  ExpectStreamingChangesNothing<float>();
  ExpectStreamingChangesNothing<double>();
  ExpectStreamingChangesNothing<bf16>();
}

TEST(LocalBatchNorm, NoChannels) {
  LocalBatchNorm<float> k(0);
  k.moments(nullptr, 0, nullptr, nullptr);
  k.affine(nullptr, 0, nullptr, nullptr, nullptr, nullptr);
  EXPECT_FALSE(LocalBatchNorm<float>::implementation().empty());
}

}  // namespace
}  // namespace distconv

namespace distconv {
namespace {

// bf16 runs the fp32 passes on its values widened as they load, fp16 on
// chunks of fp32 copies: over several chunks (tiles), their moments and
// gradient sums are the fp32 kernel's (in double, merged another way), and
// their outputs are the fp32 outputs rounded once.
template <typename N>
class NarrowBatchNormTest : public ::testing::Test {};
using NarrowTypes = GtestTypes<NarrowTypeList>;
TYPED_TEST_SUITE(NarrowBatchNormTest, NarrowTypes);

TYPED_TEST(NarrowBatchNormTest, IsTheFp32KernelOnChunks) {
  using N = TypeParam;
  for (Index channels : {Index{3}, Index{64}, Index{1}}) {
    SCOPED_TRACE(channels);
    const Index elements = channels * 70001;  // several chunks, a partial one
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<float> u(-3, 5);
    std::vector<N> xb(elements), dyb(elements), yb(elements), dxb(elements);
    for (N& v : xb) v = u(rng) + 100.0f;
    for (N& v : dyb) v = u(rng);
    const std::vector<float> xf(xb.begin(), xb.end()),
        dyf(dyb.begin(), dyb.end());
    std::vector<float> yf(elements), dxf(elements);
    LocalBatchNorm<N> h(channels);
    LocalBatchNorm<float> f(channels);
    // bf16 widens as it loads, fp16 copies chunks.
    EXPECT_EQ(h.implementation().find("fp32") != std::string::npos,
              (std::is_same_v<N, fp16>));
    std::vector<double> s1(channels), m1(channels), s2(channels), m2(channels);
    h.moments(xb.data(), elements, s1.data(), m1.data());
    f.moments(xf.data(), elements, s2.data(), m2.data());
    for (Index c = 0; c < channels; ++c) {
      EXPECT_NEAR(s1[c], s2[c], 1e-12 * std::abs(s2[c]));
      EXPECT_NEAR(m1[c], m2[c], 1e-9 * std::abs(m2[c]));
    }
    std::vector<double> mean(channels), a(channels), b(channels),
        k(channels);
    for (Index c = 0; c < channels; ++c) {
      mean[c] = s2[c] / double(elements / channels);
      a[c] = 0.5 + c;
      b[c] = -0.25 * c;
      k[c] = 0.01 * (c + 1);
    }
    h.affine(xb.data(), elements, mean.data(), a.data(), b.data(), yb.data());
    f.affine(xf.data(), elements, mean.data(), a.data(), b.data(), yf.data());
    h.gradient_sums(xb.data(), dyb.data(), elements, mean.data(), s1.data(),
                    m1.data());
    f.gradient_sums(xf.data(), dyf.data(), elements, mean.data(), s2.data(),
                    m2.data());
    for (Index c = 0; c < channels; ++c) {
      EXPECT_NEAR(s1[c], s2[c], 1e-9 * std::max(1.0, std::abs(s2[c])));
      EXPECT_NEAR(m1[c], m2[c], 1e-9 * std::max(1.0, std::abs(m2[c])));
    }
    h.diff_src(xb.data(), dyb.data(), elements, mean.data(), a.data(),
               b.data(), k.data(), dxb.data());
    f.diff_src(xf.data(), dyf.data(), elements, mean.data(), a.data(),
               b.data(), k.data(), dxf.data());
    for (Index i = 0; i < elements; ++i) {
      ASSERT_EQ(yb[i].bits(), N(yf[i]).bits()) << "affine at " << i;
      ASSERT_EQ(dxb[i].bits(), N(dxf[i]).bits()) << "diff_src at " << i;
    }
  }
}

// bf16's passes on every period (channel counts that do and do not divide
// 16) and partial chunks: the fp32 kernel's outputs on the widened values,
// rounded once, bit for bit, also in place.
TEST(Bf16BatchNorm, IsTheFp32KernelRoundedOnEveryPeriod) {
  for (Index channels : {2, 7, 9, 16, 19, 65, 130}) {
    for (Index rows : {1, 5, 63, 257}) {
      SCOPED_TRACE(testing::Message() << channels << " x " << rows);
      const Index n = channels * rows;
      const auto xb = random_values<bf16>(n, 21, 2.0),
                 dyb = random_values<bf16>(n, 22, 0.0);
      const std::vector<float> xf(xb.begin(), xb.end()),
          dyf(dyb.begin(), dyb.end());
      const auto mean = per_channel(channels, 23),
                 a = per_channel(channels, 24), b = per_channel(channels, 25),
                 k = per_channel(channels, 26);
      LocalBatchNorm<bf16> h(channels);
      LocalBatchNorm<float> f(channels);
      std::vector<bf16> yb(n), dxb(n);
      std::vector<float> yf(n), dxf(n);
      h.affine(xb.data(), n, mean.data(), a.data(), b.data(), yb.data());
      f.affine(xf.data(), n, mean.data(), a.data(), b.data(), yf.data());
      h.diff_src(xb.data(), dyb.data(), n, mean.data(), a.data(), b.data(),
                 k.data(), dxb.data());
      f.diff_src(xf.data(), dyf.data(), n, mean.data(), a.data(), b.data(),
                 k.data(), dxf.data());
      for (Index i = 0; i < n; ++i) {
        ASSERT_EQ(yb[i].bits(), bf16(yf[i]).bits()) << "affine at " << i;
        ASSERT_EQ(dxb[i].bits(), bf16(dxf[i]).bits()) << "diff_src at " << i;
      }
      std::vector<double> s1(channels), m1(channels), s2(channels),
          m2(channels);
      h.gradient_sums(xb.data(), dyb.data(), n, mean.data(), s1.data(),
                      m1.data());
      f.gradient_sums(xf.data(), dyf.data(), n, mean.data(), s2.data(),
                      m2.data());
      EXPECT_EQ(s1, s2);
      EXPECT_EQ(m1, m2);
      h.moments(xb.data(), n, s1.data(), m1.data());
      f.moments(xf.data(), n, s2.data(), m2.data());
      EXPECT_EQ(s1, s2);
      EXPECT_EQ(m1, m2);
      std::vector<bf16> inout = xb;
      h.affine(inout.data(), n, mean.data(), a.data(), b.data(), inout.data());
      for (Index i = 0; i < n; ++i) ASSERT_EQ(inout[i].bits(), yb[i].bits());
    }
  }
}

// Through a fused ReLU the gate is the sign of the forward's output as
// stored in N: values of (x - mean) a + b in (0, half N's smallest
// subnormal] round to +0 and close it, values just above open it.
TYPED_TEST(NarrowBatchNormTest, ReluGatesOnTheRoundedOutput) {
  using N = TypeParam;
  const float tiny = float(N::from_bits(1));  // the smallest subnormal
  const Index channels = 4, rows = 9;
  const std::vector<double> mean(channels, 0.0), b(channels, 0.0),
      a = {0.25, 0.5, 0.75, 1.0}, k(channels, 0.0), dy_mean(channels, 0.0);
  std::vector<N> x(channels * rows), dy(x.size()), y(x.size()),
      masked(x.size());
  for (Index r = 0; r < rows; ++r) {
    for (Index c = 0; c < channels; ++c) {
      x[r * channels + c] = N(float(r - 4) * tiny);
      dy[r * channels + c] = N(1.0f + float(r));
    }
  }
  LocalBatchNorm<N> kernel(channels);
  kernel.affine(x.data(), Index(x.size()), mean.data(), a.data(), b.data(),
                y.data(), NormActivation::kRelu);
  Index open = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool on = float(y[i]) > 0.0f;
    masked[i] = on ? dy[i] : N(0.0f);
    open += on ? 1 : 0;
  }
  // 0.25 and 0.5 of the smallest subnormal round to +0, 0.75 of it up.
  EXPECT_EQ(float(y[5 * channels + 0]), 0.0f);
  EXPECT_EQ(float(y[5 * channels + 1]), 0.0f);
  EXPECT_EQ(float(y[5 * channels + 2]), tiny);
  EXPECT_EQ(open, 2 + 3 + 4 + 4);  // per channel, ties to even
  const ReluGate relu{a.data(), b.data()};
  std::vector<double> s1(channels), d1(channels), s2(channels), d2(channels);
  kernel.gradient_sums(x.data(), dy.data(), Index(x.size()), mean.data(),
                       s1.data(), d1.data(), relu);
  kernel.gradient_sums(x.data(), masked.data(), Index(x.size()), mean.data(),
                       s2.data(), d2.data());
  EXPECT_EQ(s1, s2);
  EXPECT_EQ(d1, d2);
  std::vector<N> dx(x.size()), want(x.size());
  kernel.diff_src(x.data(), dy.data(), Index(x.size()), mean.data(), a.data(),
                  dy_mean.data(), k.data(), dx.data(), relu);
  kernel.diff_src(x.data(), masked.data(), Index(x.size()), mean.data(),
                  a.data(), dy_mean.data(), k.data(), want.data());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(dx[i].bits(), want[i].bits()) << "diff_src at " << i;
  }
}

}  // namespace
}  // namespace distconv

namespace distconv {
namespace {

// A ReLU fused into the passes is the unfused ReLU bit for bit: the
// forward's output is relu(affine(x)), and the gated backward passes equal
// the plain ones on dy masked where affine(x) (as T) is > 0.
template <typename T>
class FusedReluTest : public ::testing::Test {};
using AllTypes = GtestTypes<ElementTypeList>;
TYPED_TEST_SUITE(FusedReluTest, AllTypes);

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  return a.empty() ||  // memcmp takes no null pointers, even for 0 bytes
         std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename T>
void ExpectFusedReluIsUnfused(Index channels, Index rows) {
  SCOPED_TRACE(::testing::Message()
               << channels << " channels x " << rows << " rows");
  const Index n = channels * rows;
  std::mt19937_64 rng(channels * 1000 + rows);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<T> x(n), dy(n);
  for (T& v : x) v = static_cast<T>(u(rng) + 3.0);
  for (T& v : dy) v = static_cast<T>(u(rng));
  std::vector<double> mean(channels), a(channels), b(channels), k(channels),
      g(channels);
  for (Index c = 0; c < channels; ++c) {
    mean[c] = 3.0 + 0.1 * u(rng);
    a[c] = u(rng);
    b[c] = 0.5 * u(rng);
    k[c] = 0.1 * u(rng);
    g[c] = 0.1 * u(rng);
  }
  LocalBatchNorm<T> kernel(channels);
  std::vector<T> z(n), y(n), want_y(n), masked(n);
  kernel.affine(x.data(), n, mean.data(), a.data(), b.data(), z.data());
  kernel.affine(x.data(), n, mean.data(), a.data(), b.data(), y.data(),
                NormActivation::kRelu);
  Index gated = 0;
  for (Index i = 0; i < n; ++i) {
    const bool on = float(z[i]) > 0.0f;
    want_y[i] = on ? z[i] : T(0.0f);
    masked[i] = on ? dy[i] : T(0.0f);
    gated += on ? 0 : 1;
  }
  EXPECT_TRUE(same_bits(y, want_y));
  if (n >= 64 && channels >= 3) {  // the gate closes on some values only
    EXPECT_GT(gated, 0);
    EXPECT_LT(gated, n);
  }
  const ReluGate relu{a.data(), b.data()};
  std::vector<double> s1(channels), d1(channels), s2(channels), d2(channels);
  kernel.gradient_sums(x.data(), dy.data(), n, mean.data(), s1.data(),
                       d1.data(), relu);
  kernel.gradient_sums(x.data(), masked.data(), n, mean.data(), s2.data(),
                       d2.data());
  EXPECT_EQ(s1, s2);
  EXPECT_EQ(d1, d2);
  std::vector<T> dx(n), want_dx(n);
  kernel.diff_src(x.data(), dy.data(), n, mean.data(), a.data(), g.data(),
                  k.data(), dx.data(), relu);
  kernel.diff_src(x.data(), masked.data(), n, mean.data(), a.data(), g.data(),
                  k.data(), want_dx.data());
  EXPECT_TRUE(same_bits(dx, want_dx));
  // In place over dy.
  std::vector<T> inout = dy;
  kernel.diff_src(x.data(), inout.data(), n, mean.data(), a.data(), g.data(),
                  k.data(), inout.data(), relu);
  EXPECT_TRUE(same_bits(inout, want_dx));
}

TYPED_TEST(FusedReluTest, IsTheUnfusedReluBitForBit) {
  for (Index channels : {1, 3, 16, 19, 64}) {
    for (Index rows : {0, 1, 5, 65, 257}) {
      ExpectFusedReluIsUnfused<TypeParam>(channels, rows);
    }
  }
  ExpectFusedReluIsUnfused<TypeParam>(7, 30001);  // several narrow chunks
}

}  // namespace
}  // namespace distconv
