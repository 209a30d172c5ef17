// Test helper: a local pooling (run by `Runner`: on the host through
// pool_window.h's per-cell functions, or on the GPU through CudaPool)
// against the reference loops on random problems (2D and 3D, every kind,
// strides, asymmetric padding) on views inside larger channels-last and
// channels-first buffers and dense, with ties and NaNs: equal bit for bit,
// and no cell outside the views written.
//
//   struct Runner {
//     void forward(const PoolDesc&, Embedded<T>& x, Embedded<T>& y);
//     // y holds diff_dst; diff_src's view has x's strides.
//     void backward(const PoolDesc&, Embedded<T>& x, Embedded<T>& y,
//                   Embedded<T>& dx);
//   };
//   check_pool_against_reference<float>(runner, 400);
#ifndef DISTCONV_KERNELS_CUDA_POOL_TESTING_H_
#define DISTCONV_KERNELS_CUDA_POOL_TESTING_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "distconv/pool_desc.h"
#include "kernels/copy_view.h"
#include "kernels/reference/pool.h"
#include "kernels/view_testing.h"

namespace distconv::testing {

template <typename T>
bool same_bits(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// `after` with the cells of `view` (a view of `after`) taken from
// `before`: equal to `before` iff nothing outside the view changed.
template <typename T>
std::vector<T> outside_of(const Embedded<T>& after,
                          const std::vector<T>& before) {
  std::vector<T> out = after.buffer;
  after.view.for_each([&](const Shape&, T& v) {
    const auto i = &v - after.buffer.data();
    out[i] = before[i];
  });
  return out;
}

template <typename T, typename Runner>
void check_pool_against_reference(Runner& run, int trials) {
  std::mt19937_64 rng(23);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  int ran = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const auto problem = random_pool_problem(rng, 5, 7);
    if (!problem) continue;
    const auto& [p, src] = *problem;
    ++ran;
    const Shape dst = p.dst_shape(src);
    const bool dense = u(0, 3) == 0;
    const StorageOrder order =
        u(0, 1) ? StorageOrder::kChannelsLast : StorageOrder::kChannelsFirst;
    Embedded<T> x = embed<T>(src, rng, dense, order);
    Embedded<T> y = embed<T>(dst, rng, dense, order);
    Embedded<T> dx = x;  // diff_src: src's strides
    dx.view = StridedView<T>(
        dx.buffer.data() + (x.view.data() - x.buffer.data()), src,
        x.view.strides());
    // Few distinct values, so that max pooling meets ties; NaNs and -Inf
    // in some (windows of several NaNs, of -Inf only).
    const bool with_nan = u(0, 3) == 0;
    x.view.for_each([&](const Shape&, T& v) {
      const Index pick = with_nan ? u(0, 9) : 9;
      v = pick == 0 ? nan : pick <= 2 ? -inf : T(u(-2, 2)) / T(3);
    });
    const std::vector<T> x0 = dense_of(x.view);
    SCOPED_TRACE(::testing::Message()
                 << to_string(p.kind) << " " << src << " kernel " << p.kernel
                 << " stride " << p.stride << " padding " << p.padding_lower
                 << "/" << p.padding_upper << (dense ? " dense" : "")
                 << (with_nan ? " with NaN and -Inf" : ""));

    const std::vector<T> y_before = y.buffer;
    run.forward(p, x, y);
    std::vector<T> want(dst.volume());
    reference::pool_fwd<T>(p, src, x0.data(), dst, want.data());
    const std::vector<T> got = dense_of(y.view);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(same_bits(got[i], want[i]))
          << "forward at " << i << ": " << got[i] << " vs " << want[i];
    }
    ASSERT_EQ(outside_of(y, y_before), y_before)
        << "forward wrote outside its view";

    std::vector<T> dy(dst.volume()), want_dx(src.volume());
    for (T& v : dy) v = T(u(-50, 50)) / T(7);
    copy_view<T>(StridedView<const T>::contiguous(dy.data(), dst), y.view);
    reference::pool_bwd<T>(p, src, x0.data(), dst, dy.data(), want_dx.data());
    const std::vector<T> dx_before = dx.buffer;
    run.backward(p, x, y, dx);
    const std::vector<T> got_dx = dense_of(dx.view);
    for (size_t i = 0; i < got_dx.size(); ++i) {
      ASSERT_TRUE(same_bits(got_dx[i], want_dx[i]))
          << "backward at " << i << ": " << got_dx[i] << " vs "
          << want_dx[i];
    }
    ASSERT_EQ(outside_of(dx, dx_before), dx_before)
        << "backward wrote outside its view";
  }
  EXPECT_GT(ran, trials / 2);
}

}  // namespace distconv::testing

#endif  // DISTCONV_KERNELS_CUDA_POOL_TESTING_H_
