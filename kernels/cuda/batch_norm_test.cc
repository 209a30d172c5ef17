// CudaBatchNorm's passes against LocalBatchNorm's (host) on the same data:
// channel counts below, at and above a warp's width, row counts from 0 to
// beyond one pass of the sums' blocks, outputs in place; the sums the same
// bit for bit from run to run; moments on a large offset (1e4 + noise)
// against long double. Skips, visibly, on a machine without a GPU.
#include "kernels/cuda/batch_norm.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "kernels/local_batch_norm.h"
#include "tests/conv_check.h"
#include "tests/device_array.h"
#include "tests/expect_close.h"

namespace distconv {
namespace {

using testing::DeviceArray;
using testing::expect_close;

class CudaBatchNormTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DeviceSpace::device_count() == 0) {
      GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
    }
  }
};

template <typename T>
void ExpectPassesMatchHost(Index channels, Index rows, double tol) {
  SCOPED_TRACE(::testing::Message()
               << channels << " channels x " << rows << " rows");
  const Index n = channels * rows;
  const auto x = random_values<T>(n, 1, 3.0), dy = random_values<T>(n, 2, 0);
  const auto mean = random_values<double>(channels, 3, 3.0);
  const auto a = random_values<double>(channels, 4, 0.5);
  const auto b = random_values<double>(channels, 5, 0.5);
  const auto k = random_values<double>(channels, 6, 0.5);
  const size_t c = static_cast<size_t>(channels);
  std::vector<double> s(c), m2(c), sdy(c), sdd(c);
  std::vector<double> ws(c), wm2(c), wsdy(c), wsdd(c);
  std::vector<T> wy(n), wdx(n);
  LocalBatchNorm<T> host(channels);
  host.moments(x.data(), n, ws.data(), wm2.data());
  host.gradient_sums(x.data(), dy.data(), n, mean.data(), wsdy.data(),
                     wsdd.data());
  host.affine(x.data(), n, mean.data(), a.data(), b.data(), wy.data());
  host.diff_src(x.data(), dy.data(), n, mean.data(), a.data(), b.data(),
                k.data(), wdx.data());

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  CudaBatchNorm<T> dev(channels, stream);
  const std::vector<T> zeros(static_cast<size_t>(n));
  DeviceArray<T> xd(x), dyd(dy), yd(zeros), dxd(zeros);
  dev.moments(xd.data, n, s.data(), m2.data());
  expect_close(s, ws, 1e-12, "sums");
  expect_close(m2, wm2, 1e-10, "squared deviations");
  std::vector<double> again(c), again_m2(c);
  dev.moments(xd.data, n, again.data(), again_m2.data());
  EXPECT_EQ(again, s) << "sums differ between two runs";
  EXPECT_EQ(again_m2, m2) << "squared deviations differ between two runs";
  dev.gradient_sums(xd.data, dyd.data, n, mean.data(), sdy.data(),
                    sdd.data());
  expect_close(sdy, wsdy, 1e-10, "sum dy");
  expect_close(sdd, wsdd, 1e-10, "sum dy (x - mean)");
  dev.affine(xd.data, n, mean.data(), a.data(), b.data(), yd.data);
  dev.diff_src(xd.data, dyd.data, n, mean.data(), a.data(), b.data(),
               k.data(), dxd.data);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  expect_close(yd.read(), wy, tol, "affine");
  expect_close(dxd.read(), wdx, tol, "diff_src");
  // In place: y over x, then dx over dy.
  DeviceArray<T> xi(x), dyi(dy);
  dev.affine(xi.data, n, mean.data(), a.data(), b.data(), xi.data);
  dev.diff_src(xd.data, dyi.data, n, mean.data(), a.data(), b.data(),
               k.data(), dyi.data);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  expect_close(xi.read(), wy, tol, "affine in place");
  expect_close(dyi.read(), wdx, tol, "diff_src in place");
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(CudaBatchNormTest, PassesMatchHostDouble) {
  for (Index channels : {1, 3, 32, 33, 70}) {
    for (Index rows : {0, 1, 7, 1000, 5000}) {
      ExpectPassesMatchHost<double>(channels, rows, 1e-12);
    }
  }
}

TEST_F(CudaBatchNormTest, PassesMatchHostFloat) {
  for (Index channels : {1, 16, 33}) {
    for (Index rows : {0, 5, 3000}) {
      ExpectPassesMatchHost<float>(channels, rows, 1e-5);
    }
  }
}

// 1e4 + noise in [-1, 1): the squared deviations keep the noise's
// precision (no cancellation of 1e8-sized squares).
TEST_F(CudaBatchNormTest, MomentsOfLargeOffsetKeepPrecision) {
  const Index channels = 5, rows = 4099, n = channels * rows;
  const auto x = random_values<float>(n, 7, 1e4);
  std::vector<long double> sum(channels, 0), sq(channels, 0);
  for (Index i = 0; i < n; ++i) sum[i % channels] += x[i];
  for (Index i = 0; i < n; ++i) {
    const long double d = x[i] - sum[i % channels] / rows;
    sq[i % channels] += d * d;
  }
  CudaBatchNorm<float> dev(channels, nullptr);
  DeviceArray<float> xd(x);
  std::vector<double> s(channels), m2(channels);
  dev.moments(xd.data, n, s.data(), m2.data());
  for (Index c = 0; c < channels; ++c) {
    EXPECT_NEAR(m2[c], double(sq[c]), 1e-9 * double(sq[c])) << "channel " << c;
  }
}

TEST(CudaBatchNormArguments, NegativeChannelCountThrows) {
  // Checked before any device memory is touched: runs without a GPU.
  EXPECT_THROW(CudaBatchNorm<float>(-1, nullptr), Error);
}

}  // namespace
}  // namespace distconv
