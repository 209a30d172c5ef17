// The CUDA pooling kernels' per-cell functions (pool_window.h), run on the
// host over every cell, against the reference loops (pool_testing.h: random
// problems on embedded views, ties and NaNs, bit for bit in float and
// double; bf16 against the fp32 reference rounded once); what
// make_pool_window refuses.
#include "kernels/cuda/pool_window.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/error.h"
#include "kernels/cuda/pool_testing.h"

namespace distconv {
namespace {

using testing::Embedded;

struct OnTheHost {
  template <typename T>
  void forward(const PoolDesc& p, Embedded<T>& x, Embedded<T>& y) {
    const PoolWindow w = make_pool_window(p, x.view.extent(), x.view.strides(),
                                          y.view.extent(), y.view.strides());
    ASSERT_EQ(w.outputs(), y.view.size());
    for (std::int64_t k = 0; k < w.outputs(); ++k) {
      pool_forward_cell<T>(w, x.view.data(), y.view.data(), k);
    }
  }
  template <typename T>
  void backward(const PoolDesc& p, Embedded<T>& x, Embedded<T>& y,
                Embedded<T>& dx) {
    const PoolWindow w = make_pool_window(p, x.view.extent(), x.view.strides(),
                                          y.view.extent(), y.view.strides());
    ASSERT_EQ(w.inputs(), x.view.size());
    for (std::int64_t k = 0; k < w.inputs(); ++k) {
      pool_backward_cell<T>(w, x.view.data(), y.view.data(), dx.view.data(),
                            k);
    }
  }
};

TEST(PoolWindow, FloatMatchesTheReferenceBitForBit) {
  OnTheHost run;
  testing::check_pool_against_reference<float>(run, 400);
}

TEST(PoolWindow, DoubleMatchesTheReferenceBitForBit) {
  OnTheHost run;
  testing::check_pool_against_reference<double>(run, 400);
}

// bf16 views with fp32 sums (Acc = float, as the kernels run them): the
// reference in fp32 on the same values, each result rounded once, bit for
// bit; channels-last views.
TEST(PoolWindow, Bf16IsTheFp32ReferenceRoundedOnce) {
  std::mt19937_64 rng(31);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  int ran = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto problem = testing::random_pool_problem(rng, 5, 7);
    if (!problem) continue;
    ++ran;
    const auto& [p, src] = *problem;
    const Shape dst = p.dst_shape(src);
    SCOPED_TRACE(::testing::Message() << to_string(p.kind) << " " << src
                                      << " kernel " << p.kernel);
    std::vector<bf16> x(src.volume()), dy(dst.volume());
    for (bf16& v : x) v = static_cast<float>(u(-40, 40)) / 7.0f;
    for (bf16& v : dy) v = static_cast<float>(u(-50, 50)) / 9.0f;
    const std::vector<float> xf(x.begin(), x.end()), dyf(dy.begin(), dy.end());
    // Logical (N, C, spatial...) views of channels-last arrays.
    const Shape xs = dense_strides(src, StorageOrder::kChannelsLast);
    const Shape ys = dense_strides(dst, StorageOrder::kChannelsLast);
    const PoolWindow w = make_pool_window(p, src, xs, dst, ys);
    std::vector<bf16> y(dst.volume()), dx(src.volume());
    for (std::int64_t k = 0; k < w.outputs(); ++k) {
      pool_forward_cell<bf16, float>(w, x.data(), y.data(), k);
    }
    for (std::int64_t k = 0; k < w.inputs(); ++k) {
      pool_backward_cell<bf16, float>(w, x.data(), dy.data(), dx.data(), k);
    }
    // The reference runs on dense channels-first arrays.
    auto first = [](const std::vector<float>& last, const Shape& extent,
                    const Shape& strides) {
      std::vector<float> out(last.size());
      copy_view<float>(StridedView<const float>(last.data(), extent, strides),
                       StridedView<float>::contiguous(out.data(), extent));
      return out;
    };
    const std::vector<float> x_first = first(xf, src, xs);
    const std::vector<float> dy_first = first(dyf, dst, ys);
    std::vector<float> want_y(dst.volume()), want_dx(src.volume());
    reference::pool_fwd<float>(p, src, x_first.data(), dst, want_y.data());
    reference::pool_bwd<float>(p, src, x_first.data(), dst, dy_first.data(),
                               want_dx.data());
    const std::vector<float> y_first = first(
        std::vector<float>(y.begin(), y.end()), dst, ys);
    const std::vector<float> dx_first = first(
        std::vector<float>(dx.begin(), dx.end()), src, xs);
    for (size_t i = 0; i < want_y.size(); ++i) {
      ASSERT_EQ(bf16(y_first[i]).bits(), bf16(want_y[i]).bits())
          << "forward at " << i << ": " << y_first[i] << " vs " << want_y[i];
    }
    for (size_t i = 0; i < want_dx.size(); ++i) {
      ASSERT_EQ(bf16(dx_first[i]).bits(), bf16(want_dx[i]).bits())
          << "backward at " << i << ": " << dx_first[i] << " vs "
          << want_dx[i];
    }
  }
  EXPECT_GT(ran, 150);
}

TEST(PoolWindow, RefusesWhatNoLocalWindowHas) {
  PoolDesc p = PoolDesc::make(PoolKind::kMax, {3, 3});
  p.stride = {1, 1};
  p.padding_lower = p.padding_upper = {1, 1};
  const Shape src{1, 2, 6, 6};
  const Shape s = dense_strides(src, StorageOrder::kChannelsLast);
  try {
    make_pool_window(p, src, s, Shape{1, 2, 5, 6}, s);
    FAIL() << "a wrong output extent was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  }
  try {
    make_pool_window(p, src, Shape{1, 1, 1}, src, s);
    FAIL() << "strides of the wrong rank were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  }
  p.padding_mode = {PaddingMode::kZeros, PaddingMode::kCircular};
  try {
    make_pool_window(p, src, s, src, s);
    FAIL() << "circular padding was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("circular"), std::string::npos);
  }
}

}  // namespace
}  // namespace distconv
