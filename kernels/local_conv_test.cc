#include "kernels/local_conv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

#include "distconv/halo_layout.h"
#include "kernels/copy_view.h"
#include "kernels/reference/conv.h"
#include "kernels/view_testing.h"
#include "tests/gtest_types.h"

namespace distconv {
namespace {

using testing::dense_of;
using testing::embed;
using testing::Embedded;

template <typename T>
void CheckRandomPieces(double tol) {
  std::mt19937_64 rng(3);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  std::uniform_real_distribution<double> val(-1, 1);
  for (int trial = 0; trial < 150; ++trial) {
    const std::optional<testing::ConvProblem> problem =
        testing::random_conv_problem(rng, 3, 7);
    if (!problem) continue;
    const ConvDesc& c = problem->desc;
    const Shape& src = problem->src;
    const Shape dst = c.dst_shape(src);
    const bool dense = u(0, 1);
    Embedded<T> x = embed<T>(src, rng, dense), y = embed<T>(dst, rng, dense);
    std::vector<T> w(c.weights_shape().volume()), b(c.out_channels);
    for (T& v : w) v = val(rng);
    for (T& v : b) v = val(rng);
    x.view.for_each([&](const Shape&, T& v) { v = val(rng); });
    y.view.for_each([&](const Shape&, T& v) { v = val(rng); });
    const std::vector<T> x0 = dense_of(x.view), y0 = dense_of(y.view);
    const T* bias = c.bias == ConvBias::kAdd ? b.data() : nullptr;
    auto expect_close = [&](const std::vector<T>& got,
                            const std::vector<T>& want, const char* what) {
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], tol) << what << " at " << i;
      }
    };
    // Forward.
    LocalConv<T> f(c, src, x.view.strides(), dst, y.view.strides(),
                   ConvPass::kForward);
    SCOPED_TRACE(f.implementation());
    std::vector<T> want(dst.volume());
    reference::conv_fwd(c, src, x0.data(), w.data(), bias, dst, want.data());
    f.forward(x.view, w.data(), bias, y.view);
    expect_close(dense_of(y.view), want, "forward");
    // Backward-data (y now holds the forward result: use y0 as diff_dst).
    copy_view<T>(StridedView<const T>::contiguous(y0.data(), dst), y.view);
    LocalConv<T> bd(c, src, x.view.strides(), dst, y.view.strides(),
                    ConvPass::kBackwardData);
    std::vector<T> want_dx(src.volume());
    reference::conv_bwd_data(c, dst, y0.data(), w.data(), src, want_dx.data());
    Embedded<T> dx = embed<T>(src, rng, dense);
    LocalConv<T> bd2(c, src, dx.view.strides(), dst, y.view.strides(),
                     ConvPass::kBackwardData);
    bd2.backward_data(y.view, w.data(), dx.view);
    expect_close(dense_of(dx.view), want_dx, "backward data");
    // Backward-weights adds to what is there.
    std::vector<T> want_dw(w.size()), want_db(b.size());
    reference::conv_bwd_weights(c, src, x0.data(), dst, y0.data(),
                                want_dw.data(), want_db.data());
    std::vector<T> dw(w.size(), T(1)), db(b.size(), T(1));
    LocalConv<T> bw(c, src, x.view.strides(), dst, y.view.strides(),
                    ConvPass::kBackwardWeights);
    bw.backward_weights(x.view, y.view, dw.data(), db.data());
    for (T& v : want_dw) v += 1;
    expect_close(dw, want_dw, "diff weights");
    if (c.bias == ConvBias::kAdd) {
      for (T& v : want_db) v += 1;
      expect_close(db, want_db, "diff bias");
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(LocalConv, FloatMatchesTheReferenceOnStridedViews) {
  CheckRandomPieces<float>(1e-4);
}

TEST(LocalConv, DoubleMatchesTheReferenceOnStridedViews) {
  CheckRandomPieces<double>(1e-12);
}

TEST(LocalConv, DenseChannelsLastFloatRunsInPlace) {
  ConvDesc c = ConvDesc::make(16, 16, {3, 3});
  c.padding_lower = c.padding_upper = {1, 1};
  const Shape x{1, 16, 8, 8};
  const Shape strides{1024, 1, 128, 16};
  LocalConv<float> f(c, x, strides, x, strides, ConvPass::kForward);
  EXPECT_NE(f.implementation().find("in place"), std::string::npos)
      << f.implementation();
  LocalConv<double> d(c, x, strides, x, strides, ConvPass::kForward);
  EXPECT_NE(d.implementation().find("reference"), std::string::npos);
}

// bf16 and fp16 views run the fp32 kernel on fp32 copies: on exact inputs
// each output is the fp32 layer's, rounded once, bit for bit; weight
// gradients are fp32 and equal to the fp32 kernel's.
template <typename N>
class NarrowLocalConv : public ::testing::Test {};
using NarrowTypes = GtestTypes<NarrowTypeList>;
TYPED_TEST_SUITE(NarrowLocalConv, NarrowTypes);

TYPED_TEST(NarrowLocalConv, IsTheFp32KernelRoundedOnce) {
  using N = TypeParam;
  ConvDesc c = ConvDesc::make(16, 8, {3, 3});
  c.padding_lower = c.padding_upper = {1, 1};
  c.bias = ConvBias::kAdd;
  const Shape x{2, 16, 9, 7}, y{2, 8, 9, 7};
  const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
  const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> val(-1, 1);
  std::vector<N> xb(x.volume()), yb(y.volume()), dyb(y.volume());
  std::vector<float> w(c.weights_shape().volume()), b(8);
  for (N& v : xb) v = val(rng);
  for (N& v : dyb) v = val(rng);
  for (float& v : w) v = val(rng);
  for (float& v : b) v = val(rng);
  const std::vector<float> xf(xb.begin(), xb.end()), dyf(dyb.begin(), dyb.end());
  std::vector<float> yf(y.volume()), dxf(x.volume()), dwf(w.size(), 0.5f),
      dbf(8, 0.5f);
  std::vector<N> dxb(x.volume());
  std::vector<float> dwb(w.size(), 0.5f), dbb(8, 0.5f);
  const auto view = [](auto& v, const Shape& e, const Shape& s) {
    using E = std::remove_reference_t<decltype(v[0])>;
    return StridedView<E>(v.data(), e, s);
  };
  for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData,
                        ConvPass::kBackwardWeights}) {
    LocalConv<float> f(c, x, xs, y, ys, pass);
    LocalConv<N> h(c, x, xs, y, ys, pass);
    SCOPED_TRACE(h.implementation());
    EXPECT_NE(h.implementation().find("in fp32"), std::string::npos);
    if (pass == ConvPass::kForward) {
      f.forward(view(xf, x, xs), w.data(), b.data(), view(yf, y, ys));
      h.forward(view(xb, x, xs), w.data(), b.data(), view(yb, y, ys));
      for (size_t i = 0; i < yb.size(); ++i) {
        ASSERT_EQ(yb[i].bits(), N(yf[i]).bits()) << "forward at " << i;
      }
    } else if (pass == ConvPass::kBackwardData) {
      f.backward_data(view(dyf, y, ys), w.data(), view(dxf, x, xs));
      h.backward_data(view(dyb, y, ys), w.data(), view(dxb, x, xs));
      for (size_t i = 0; i < dxb.size(); ++i) {
        ASSERT_EQ(dxb[i].bits(), N(dxf[i]).bits()) << "backward at " << i;
      }
    } else {
      f.backward_weights(view(xf, x, xs), view(dyf, y, ys), dwf.data(),
                         dbf.data());
      h.backward_weights(view(xb, x, xs), view(dyb, y, ys), dwb.data(),
                         dbb.data());
      EXPECT_EQ(dwb, dwf);
      EXPECT_EQ(dbb, dbf);
    }
  }
}

// One local problem of the table-driven tests below.
struct Case {
  Index in, out, groups;
  Shape kernel, stride, dilation, pad_lo, pad_hi, src;
};

ConvDesc desc_of(const Case& k) {
  ConvDesc c = ConvDesc::make(k.in, k.out, k.kernel);
  c.groups = k.groups;
  c.stride = k.stride;
  c.dilation = k.dilation;
  c.padding_lower = k.pad_lo;
  c.padding_upper = k.pad_hi;
  return c;
}

// bf16 and fp16 pieces larger than a few times the L2 cache are staged a
// slab of samples or rows at a time; each slab is a local convolution of
// its own (the inputs its outputs read, or the outputs that reach its
// input gradients), so the results are those of the fp32 kernel on the
// whole piece rounded once (forward and backward-data; the weight
// gradients summed slab by slab, to fp32 rounding). The first problem
// (32 MiB in fp32) is staged in slabs on any CPU with an L2 cache under
// 16 MiB; strides, dilation, uneven padding, several samples, 3D and a
// backward-data that cannot be cut into slabs follow.
TYPED_TEST(NarrowLocalConv, InSlabsIsTheWholeFp32RunRoundedOnce) {
  using N = TypeParam;
  const Case cases[] = {
      {16, 16, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 16, 1024, 256}},
      {8, 12, 1, {5, 3}, {2, 1}, {2, 1}, {3, 0}, {1, 2}, {1, 8, 1031, 130}},
      {16, 16, 2, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {2, 1}, {6, 16, 130, 128}},
      {8,
       8,
       1,
       {3, 3, 3},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       {1, 8, 130, 40, 40}},
      // Backward-data: odd rows receive nothing, so it is staged whole.
      {8, 8, 1, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 8, 1024, 256}},
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> val(-1, 1);
  for (const Case& k : cases) {
    ConvDesc c = desc_of(k);
    c.bias = ConvBias::kAdd;
    const Shape x = k.src, y = c.dst_shape(x);
    const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
    const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
    std::vector<N> xn(x.volume()), dyn(y.volume()), yn(y.volume()),
        dxn(x.volume());
    std::vector<float> w(c.weights_shape().volume()), b(c.out_channels);
    for (N& v : xn) v = val(rng);
    for (N& v : dyn) v = val(rng);
    for (float& v : w) v = val(rng);
    for (float& v : b) v = val(rng);
    const std::vector<float> xf(xn.begin(), xn.end()),
        dyf(dyn.begin(), dyn.end());
    std::vector<float> yf(y.volume()), dxf(x.volume()), dwf(w.size(), 0.0f),
        dbf(b.size(), 0.0f), dwn(w.size(), 0.0f), dbn(b.size(), 0.0f);
    for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData,
                          ConvPass::kBackwardWeights}) {
      const LocalConv<float> f(c, x, xs, y, ys, pass);
      const LocalConv<N> h(c, x, xs, y, ys, pass, f.impl());
      SCOPED_TRACE(::testing::Message() << x << ": " << h.implementation());
      if (&k == &cases[0]) {
        EXPECT_NE(h.implementation().find(" slabs in fp32"), std::string::npos);
      }
      if (pass == ConvPass::kForward) {
        f.forward(StridedView<const float>(xf.data(), x, xs), w.data(),
                  b.data(), StridedView<float>(yf.data(), y, ys));
        h.forward(StridedView<const N>(xn.data(), x, xs), w.data(), b.data(),
                  StridedView<N>(yn.data(), y, ys));
        for (size_t i = 0; i < yn.size(); ++i) {
          ASSERT_EQ(yn[i].bits(), N(yf[i]).bits()) << "forward at " << i;
        }
      } else if (pass == ConvPass::kBackwardData) {
        f.backward_data(StridedView<const float>(dyf.data(), y, ys), w.data(),
                        StridedView<float>(dxf.data(), x, xs));
        h.backward_data(StridedView<const N>(dyn.data(), y, ys), w.data(),
                        StridedView<N>(dxn.data(), x, xs));
        for (size_t i = 0; i < dxn.size(); ++i) {
          ASSERT_EQ(dxn[i].bits(), N(dxf[i]).bits()) << "backward at " << i;
        }
      } else {
        f.backward_weights(StridedView<const float>(xf.data(), x, xs),
                           StridedView<const float>(dyf.data(), y, ys),
                           dwf.data(), dbf.data());
        h.backward_weights(StridedView<const N>(xn.data(), x, xs),
                           StridedView<const N>(dyn.data(), y, ys), dwn.data(),
                           dbn.data());
        // Sums of `terms` products below 1 in magnitude, added in another
        // order: twice fp32's epsilon per term at most.
        const double terms = double(y.volume()) / y[1];
        const double tol = 2 * 6e-8 * terms;
        for (size_t i = 0; i < w.size(); ++i) {
          ASSERT_NEAR(dwn[i], dwf[i], tol) << "weight gradient " << i;
        }
        for (size_t i = 0; i < b.size(); ++i) {
          ASSERT_NEAR(dbn[i], dbf[i], tol) << "bias gradient " << i;
        }
      }
    }
  }
}

// A piece staged in slabs holds buffers for a slab, not for the whole
// piece: no kernel for the whole piece is built beside the slabs' (on
// blocked copies it would hold blocked copies of the whole piece). A
// piece staged whole holds its fp32 copies.
TYPED_TEST(NarrowLocalConv, InSlabsHoldsBuffersForSlabsOnly) {
  using N = TypeParam;
  const Case cases[] = {
      // Staged in slabs.
      {16, 16, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 16, 1024, 256}},
      // Backward-data staged whole (odd rows receive nothing).
      {8, 8, 1, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 8, 1024, 256}},
  };
  const long cache = sysconf(_SC_LEVEL2_CACHE_SIZE);  // as the library reads it
  const Index l2 = cache > 0 ? cache : Index{1} << 20;
  const ConvImpl blocked = __builtin_cpu_supports("avx512f")
                               ? ConvImpl::kBlocked16
                               : ConvImpl::kBlocked8;
  for (const Case& k : cases) {
    const ConvDesc c = desc_of(k);
    const Shape x = k.src, y = c.dst_shape(x);
    const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
    const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
    const Index piece = Index{4} * (x.volume() + y.volume());  // fp32 bytes
    for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData,
                          ConvPass::kBackwardWeights}) {
      for (ConvImpl impl : {heuristic_conv_impl(c, pass, x, y), blocked}) {
        const LocalConv<N> h(c, x, xs, y, ys, pass, impl);
        SCOPED_TRACE(::testing::Message() << x << ": " << h.implementation()
                                          << ", " << h.held_bytes() << " B");
        const bool in_slabs =
            h.implementation().find(" slabs in fp32") != std::string::npos;
        if (&k == &cases[1] && pass == ConvPass::kBackwardData) {
          EXPECT_FALSE(in_slabs);
          EXPECT_GE(h.held_bytes(), piece);
        } else if (&k == &cases[0]) {
          EXPECT_TRUE(in_slabs);
          // The staging copies of one slab and up to three kernels (first,
          // middle and last slab), each slab about twice the L2 cache.
          EXPECT_LT(h.held_bytes(), 5 * 2 * l2);
        }
      }
    }
  }
}

// fp32 pieces on blocked copies larger than a few times the L2 cache run a
// slab of samples or rows at a time on the views themselves (each slab a
// local convolution of its own, its blocked copies held in the cache):
// what the channels-last kernel gives on the whole piece (to fp32
// rounding), in place (whole samples or rows of one sample) and per
// sample (a gap between samples: rows of one sample only), 2D and 3D.
TEST(LocalConv, BlockedCopiesInSlabsMatchTheReference) {
  const ConvImpl blocked = __builtin_cpu_supports("avx512f")
                               ? ConvImpl::kBlocked16
                               : ConvImpl::kBlocked8;
  const Case cases[] = {
      {16, 16, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 16, 1024, 256}},
      {16, 16, 1, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {2, 1}, {6, 16, 130, 128}},
      {16,
       16,
       1,
       {3, 3, 3},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       {1, 16, 130, 40, 40}},
  };
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<float> val(-1, 1);
  int slabbed = 0;
  for (const Case& k : cases) {
    for (const Index gap : {Index{0}, Index{16}}) {
      ConvDesc c = desc_of(k);
      c.bias = ConvBias::kAdd;
      const Shape x = k.src, y = c.dst_shape(x);
      Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
      Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
      xs[0] += gap;  // per sample where the gap breaks density
      ys[0] += gap;
      std::vector<float> xv(x[0] * xs[0]), dy(y[0] * ys[0]);
      std::vector<float> w(c.weights_shape().volume()), b(c.out_channels);
      for (float& v : xv) v = val(rng);
      for (float& v : dy) v = val(rng);
      for (float& v : w) v = val(rng);
      for (float& v : b) v = val(rng);
      const StridedView<const float> xin(xv.data(), x, xs);
      const StridedView<const float> dyin(dy.data(), y, ys);
      // Sums of `terms` products below 1 in magnitude.
      const double fwd_tol = 4 * 6e-8 * c.weights_shape().volume();
      for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData,
                            ConvPass::kBackwardWeights}) {
        const LocalConv<float> got(c, x, xs, y, ys, pass, blocked);
        const LocalConv<float> want(c, x, xs, y, ys, pass,
                                    ConvImpl::kChannelsLast);
        SCOPED_TRACE(::testing::Message()
                     << x << " gap " << gap << " pass " << int(pass) << ": "
                     << got.implementation() << " against "
                     << want.implementation());
        if (got.impl() != blocked) continue;  // oneDNN picks other blocks
        const bool in_slabs =
            got.implementation().find(" slabs") != std::string::npos;
        // (A slab shape oneDNN runs on other blocks keeps the piece whole.)
        if (&k == &cases[0]) {
          EXPECT_TRUE(in_slabs);
        }
        slabbed += in_slabs;
        if (pass == ConvPass::kForward) {
          std::vector<float> a(dy.size(), 0.0f), r(dy.size(), 0.0f);
          got.forward(xin, w.data(), b.data(),
                      StridedView<float>(a.data(), y, ys));
          want.forward(xin, w.data(), b.data(),
                       StridedView<float>(r.data(), y, ys));
          for (size_t i = 0; i < a.size(); ++i) {
            ASSERT_NEAR(a[i], r[i], fwd_tol) << "forward at " << i;
          }
        } else if (pass == ConvPass::kBackwardData) {
          std::vector<float> a(xv.size(), 0.0f), r(xv.size(), 0.0f);
          got.backward_data(dyin, w.data(),
                            StridedView<float>(a.data(), x, xs));
          want.backward_data(dyin, w.data(),
                             StridedView<float>(r.data(), x, xs));
          for (size_t i = 0; i < a.size(); ++i) {
            ASSERT_NEAR(a[i], r[i], fwd_tol) << "backward-data at " << i;
          }
        } else {
          std::vector<float> dw(w.size(), 0.0f), db(b.size(), 0.0f),
              rw(w.size(), 0.0f), rb(b.size(), 0.0f);
          got.backward_weights(xin, dyin, dw.data(), db.data());
          want.backward_weights(xin, dyin, rw.data(), rb.data());
          const double tol = 4 * 6e-8 * (double(y.volume()) / y[1]);
          for (size_t i = 0; i < dw.size(); ++i) {
            ASSERT_NEAR(dw[i], rw[i], tol) << "weight gradient " << i;
          }
          for (size_t i = 0; i < db.size(); ++i) {
            ASSERT_NEAR(db[i], rb[i], tol) << "bias gradient " << i;
          }
        }
      }
    }
  }
  if (slabbed == 0) {
    GTEST_SKIP() << "oneDNN picks neither 16- nor 8-channel blocks for these "
                    "problems on this CPU";
  }
}

// oneDNN 3.2's channels-last 1x1 backward-weights kernels for AVX-512 and AVX2
// crash on strided problems with fewer than 16 input channels per group
// (kernels/onednn/conv.cc), as does its bf16 one: a local kernel asked for
// channels-last (or the heuristic's) runs blocked copies there instead,
// not the reference loops, and a bf16 one asked for native16 the fp32
// kernels on fp32 copies; both give the loops' gradients. Without the
// guard this test ends in a segmentation fault on such CPUs.
TEST(LocalConv, StridedOneByOneBackwardWeightsWithFewChannelsRuns) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<float> val(-1, 1);
  for (Index in : {2, 8, 12, 16}) {
    ConvDesc c = ConvDesc::make(in, 8, {1, 1});
    c.stride = {2, 2};
    c.bias = ConvBias::kAdd;
    const Shape x{1, in, 256, 200}, y = c.dst_shape(x);
    const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
    const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
    // Values bf16 holds exactly, for the bf16 kernel below.
    std::vector<float> xv(x.volume()), dy(y.volume());
    for (float& v : xv) v = float(bf16(val(rng)));
    for (float& v : dy) v = float(bf16(val(rng)));
    // The loops on channels-first copies.
    const Shape xc = dense_strides(x, StorageOrder::kChannelsFirst);
    const Shape yc = dense_strides(y, StorageOrder::kChannelsFirst);
    std::vector<float> x0(x.volume()), dy0(y.volume());
    copy_view<float>(StridedView<const float>(xv.data(), x, xs),
                     StridedView<float>(x0.data(), x, xc));
    copy_view<float>(StridedView<const float>(dy.data(), y, ys),
                     StridedView<float>(dy0.data(), y, yc));
    std::vector<float> want(c.weights_shape().volume(), 0.0f), want_b(8, 0.0f);
    reference::conv_bwd_weights(c, x, x0.data(), y, dy0.data(), want.data(),
                                want_b.data());
    // A kernel's gradients against the loops': sums of `terms` products
    // below 1 in magnitude, added in another order (twice fp32's epsilon
    // per term at most).
    auto check = [&](const auto& k, const auto* src, const auto* diff_dst) {
      using E = std::remove_const_t<std::remove_pointer_t<decltype(src)>>;
      SCOPED_TRACE(k.implementation());
      EXPECT_NE(k.impl(), ConvImpl::kReference);
      std::vector<float> dw(want.size(), 0.0f), db(8, 0.0f);
      k.backward_weights(StridedView<const E>(src, x, xs),
                         StridedView<const E>(diff_dst, y, ys), dw.data(),
                         db.data());
      const double tol = 2 * 6e-8 * (double(y.volume()) / y[1]);
      for (size_t i = 0; i < dw.size(); ++i) {
        ASSERT_NEAR(dw[i], want[i], tol) << "weight gradient " << i;
      }
      for (size_t i = 0; i < db.size(); ++i) {
        ASSERT_NEAR(db[i], want_b[i], tol) << "bias gradient " << i;
      }
    };
    for (ConvImpl impl :
         {ConvImpl::kChannelsLast,
          heuristic_conv_impl(c, ConvPass::kBackwardWeights, x, y)}) {
      check(LocalConv<float>(c, x, xs, y, ys, ConvPass::kBackwardWeights,
                             impl),
            xv.data(), dy.data());
    }
    // bf16 asking for oneDNN's own 16-bit kernels: the fp32 kernels on
    // fp32 copies where those crash.
    const std::vector<bf16> xb(xv.begin(), xv.end()), dyb(dy.begin(), dy.end());
    check(LocalConv<bf16>(c, x, xs, y, ys, ConvPass::kBackwardWeights,
                          ConvImpl::kNative16),
          xb.data(), dyb.data());
  }
}

// Backward-weights on blocked copies (ConvImpl::kBlocked16 where the CPU
// has AVX-512, kBlocked8 where it has AVX2) reorders the activations into
// oneDNN's blocked layout; the result must not change (including
// channel counts that are not a multiple of the block, groups, 3D, stride,
// and views that are not dense).
TEST(LocalConv, BackwardWeightsOnBlockedCopiesMatchesTheReference) {
  const Case cases[] = {
      {64, 64, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 64, 7, 6}},
      {80, 72, 1, {3, 2}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 80, 9, 5}},
      {128, 128, 2, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 128, 5, 8}},
      {64, 64, 1, {3, 1, 2}, {1, 1, 1}, {1, 1, 1}, {1, 0, 1}, {1, 0, 1},
       {1, 64, 4, 5, 3}},
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> val(-1, 1);
  for (const Case& k : cases) {
    for (const bool dense : {true, false}) {
      ConvDesc c = desc_of(k);
      c.bias = ConvBias::kAdd;
      const Shape dst = c.dst_shape(k.src);
      Embedded<float> x = embed<float>(k.src, rng, dense);
      Embedded<float> dy = embed<float>(dst, rng, dense);
      x.view.for_each([&](const Shape&, float& v) { v = val(rng); });
      dy.view.for_each([&](const Shape&, float& v) { v = val(rng); });
      const bool avx512 = __builtin_cpu_supports("avx512f");
      LocalConv<float> bw(c, k.src, x.view.strides(), dst, dy.view.strides(),
                          ConvPass::kBackwardWeights,
                          avx512 ? ConvImpl::kBlocked16 : ConvImpl::kBlocked8);
      SCOPED_TRACE(bw.implementation());
      // oneDNN picks 16-channel blocks on AVX-512 for these problems (on
      // AVX2 it may pick no blocks: then channels-last runs, as
      // implementation() says).
      if (avx512) {
        EXPECT_NE(bw.implementation().find("on blocked copies"),
                  std::string::npos);
      }
      std::vector<float> dw(c.weights_shape().volume()), db(k.out);
      bw.backward_weights(x.view, dy.view, dw.data(), db.data());
      const std::vector<float> x0 = dense_of(x.view), dy0 = dense_of(dy.view);
      std::vector<float> want_dw(dw.size()), want_db(db.size());
      reference::conv_bwd_weights(c, k.src, x0.data(), dst, dy0.data(),
                                  want_dw.data(), want_db.data());
      for (size_t i = 0; i < dw.size(); ++i) {
        ASSERT_NEAR(dw[i], want_dw[i], 1e-4) << "diff weights at " << i;
      }
      for (size_t i = 0; i < db.size(); ++i) {
        ASSERT_NEAR(db[i], want_db[i], 1e-4) << "diff bias at " << i;
      }
    }
  }
}

// With stride 1 and 8 or more output channels per group, backward-data
// runs as the adjoint forward convolution (transposed, flipped weights,
// mirrored padding); the result must not change (groups, dilation,
// asymmetric and zero padding, even and lop-sided 3D kernels, views that
// are not dense). Stride 2, or padding beyond the kernel's extent, keep
// oneDNN's backward-data primitive.
TEST(LocalConv, BackwardDataAsAdjointForwardMatchesTheReference) {
  struct AdjointCase {
    Case problem;
    bool adjoint;
  };
  const AdjointCase cases[] = {
      {{16, 16, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 16, 7, 6}},
       true},
      {{6, 24, 2, {3, 2}, {1, 1}, {2, 1}, {4, 0}, {0, 1}, {1, 6, 9, 5}}, true},
      {{16, 8, 1, {3, 1, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1}, {2, 0, 0},
        {1, 16, 4, 5, 3}},
       true},
      {{16, 16, 1, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 16, 7, 6}},
       false},
      {{16, 16, 1, {3, 3}, {1, 1}, {1, 1}, {3, 1}, {1, 1}, {1, 16, 7, 6}},
       false},
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> val(-1, 1);
  for (const AdjointCase& a : cases) {
    const Case& k = a.problem;
    for (const bool dense : {true, false}) {
      const ConvDesc c = desc_of(k);
      const Shape dst = c.dst_shape(k.src);
      Embedded<float> dx = embed<float>(k.src, rng, dense);
      Embedded<float> dy = embed<float>(dst, rng, dense);
      dy.view.for_each([&](const Shape&, float& v) { v = val(rng); });
      std::vector<float> w(c.weights_shape().volume());
      for (float& v : w) v = val(rng);
      LocalConv<float> bd(c, k.src, dx.view.strides(), dst, dy.view.strides(),
                          ConvPass::kBackwardData);
      SCOPED_TRACE(bd.implementation());
      EXPECT_EQ(bd.implementation().find("adjoint forward") !=
                    std::string::npos,
                a.adjoint);
      bd.backward_data(dy.view, w.data(), dx.view);
      const std::vector<float> dy0 = dense_of(dy.view);
      std::vector<float> want(k.src.volume());
      reference::conv_bwd_data(c, dst, dy0.data(), w.data(), k.src,
                               want.data());
      const std::vector<float> got = dense_of(dx.view);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4) << "diff src at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace distconv
