// The CUDA pooling kernels' per-cell functions (pool_window.h), run on the
// host over every cell, against the reference loops (pool_testing.h: random
// problems on embedded views, ties and NaNs, bit for bit in float and
// double); what make_pool_window refuses.
#include "kernels/cuda/pool_window.h"

#include <gtest/gtest.h>

#include <string>

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
