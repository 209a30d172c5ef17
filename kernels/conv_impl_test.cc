// Every implementation of each pass's list against the reference loops on
// random problems (strides, dilation, padding, groups, 2D and 3D, dense and
// strided views, every element type); an implementation that does not
// apply says why and the kernel falls back. The heuristic's rules, the
// names, and the measured search's pick.
#include "kernels/conv_impl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <type_traits>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/error.h"
#include "distconv/fp16.h"
#include "kernels/conv_impl_search.h"
#include "kernels/local_conv.h"
#include "kernels/reference/conv.h"
#include "kernels/view_testing.h"
#include "tests/gtest_types.h"

namespace distconv {
namespace {

using testing::dense_of;
using testing::embed;
using testing::Embedded;

constexpr ConvPass kPasses[] = {ConvPass::kForward, ConvPass::kBackwardData,
                                ConvPass::kBackwardWeights};

// Runs `pass` of the problem with the kernel asked for `impl`, against the
// reference loops in Compute<T> on the same (rounded) inputs; returns the
// implementation that ran.
template <typename T>
ConvImpl check_pass(const testing::ConvProblem& p, ConvPass pass, ConvImpl impl,
                    std::mt19937_64& rng, double tol) {
  using P = Compute<T>;
  std::uniform_real_distribution<double> val(-1, 1);
  const ConvDesc& c = p.desc;
  const Shape& src = p.src;
  const Shape dst = c.dst_shape(src);
  const bool dense = std::uniform_int_distribution<int>(0, 1)(rng);
  Embedded<T> x = embed<T>(src, rng, dense), y = embed<T>(dst, rng, dense);
  x.view.for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  y.view.for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  std::vector<P> w(c.weights_shape().volume()), b(c.out_channels);
  for (P& v : w) v = val(rng);
  for (P& v : b) v = val(rng);
  const P* bias = c.bias == ConvBias::kAdd ? b.data() : nullptr;
  auto widen = [](const std::vector<T>& v) {
    return std::vector<P>(v.begin(), v.end());
  };
  const std::vector<P> x0 = widen(dense_of(x.view)),
                       y0 = widen(dense_of(y.view));
  const LocalConv<T> k(c, src, x.view.strides(), dst, y.view.strides(), pass,
                       impl);
  SCOPED_TRACE(k.implementation());
  if (k.impl() != impl) {
    EXPECT_FALSE(k.why_not().empty());
    EXPECT_NE(k.implementation().find(" does not apply: "), std::string::npos);
  } else {
    EXPECT_TRUE(k.why_not().empty());
  }
  // oneDNN's 16-bit kernels read the weights rounded to T.
  std::vector<P> w_ref = w;
  if (k.impl() == ConvImpl::kNative16) {
    for (P& v : w_ref) v = P(T(v));
  }
  auto expect_close = [&](const std::vector<P>& got, const std::vector<P>& want,
                          const char* what) {
    ASSERT_EQ(got.size(), want.size());
    // Plus half a unit in the last place of a 16-bit result (outputs are
    // rounded to T once: sums in another order may round the other way).
    const double ulp = std::is_same_v<T, bf16>   ? 1.0 / 256
                       : std::is_same_v<T, fp16> ? 1.0 / 2048
                                                 : 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], tol + ulp * std::abs(double(want[i])))
          << what << " at " << i;
    }
  };
  if (pass == ConvPass::kForward) {
    std::vector<P> want(dst.volume());
    reference::conv_fwd(c, src, x0.data(), w_ref.data(), bias, dst,
                        want.data());
    k.forward(x.view, w.data(), bias, y.view);
    expect_close(widen(dense_of(y.view)), want, "forward");
  } else if (pass == ConvPass::kBackwardData) {
    std::vector<P> want(src.volume());
    reference::conv_bwd_data(c, dst, y0.data(), w_ref.data(), src, want.data());
    k.backward_data(y.view, w.data(), x.view);
    expect_close(widen(dense_of(x.view)), want, "backward-data");
  } else {
    std::vector<P> want_dw(w.size(), 0), want_db(b.size(), 0);
    reference::conv_bwd_weights(c, src, x0.data(), dst, y0.data(),
                                want_dw.data(), want_db.data());
    // Adds to what is there.
    std::vector<P> dw(w.size(), P(1)), db(b.size(), P(1));
    k.backward_weights(x.view, y.view, dw.data(), bias ? db.data() : nullptr);
    for (P& v : want_dw) v += 1;
    expect_close(dw, want_dw, "weight gradient");
    if (bias) {
      for (P& v : want_db) v += 1;
      expect_close(db, want_db, "bias gradient");
    }
  }
  return k.impl();
}

// Random problems with 1-20 channels per group (so 16-channel blocks
// arise), plus fixed ones with whole blocks; each pass with each of its
// implementations. Returns, per pass, the implementations that ran as
// asked.
template <typename T>
std::map<ConvPass, std::set<ConvImpl>> check_every_impl(double tol) {
  std::mt19937_64 rng(11);
  std::vector<testing::ConvProblem> problems;
  while (problems.size() < 24) {
    if (auto p = testing::random_conv_problem(rng, 20, 6)) {
      problems.push_back(*p);
    }
  }
  for (Index c : {16, 32}) {
    ConvDesc d = ConvDesc::make(c, c, {3, 3});
    d.padding_lower = d.padding_upper = {1, 1};
    d.bias = ConvBias::kAdd;
    problems.push_back({d, Shape{2, c, 6, 5}});
    ConvDesc d3 = ConvDesc::make(c, 16, {3, 3, 3});
    d3.padding_lower = d3.padding_upper = {1, 1, 1};
    problems.push_back({d3, Shape{1, c, 4, 5, 3}});
    // Dense layers (the kernel covers the input): the inner product's.
    ConvDesc dense = ConvDesc::make(c, 8, {4, 3});
    dense.bias = ConvBias::kAdd;
    problems.push_back({dense, Shape{2, c, 4, 3}});
    problems.push_back(
        {ConvDesc::make(c, 16, {2, 3, 2}), Shape{3, c, 2, 3, 2}});
  }
  std::map<ConvPass, std::set<ConvImpl>> ran;
  for (const testing::ConvProblem& p : problems) {
    for (ConvPass pass : kPasses) {
      for (ConvImpl impl : conv_impl_list(pass)) {
        SCOPED_TRACE(::testing::Message()
                     << to_string(impl) << " pass " << static_cast<int>(pass)
                     << " src " << p.src << " kernel " << p.desc.kernel
                     << " stride " << p.desc.stride << " groups "
                     << p.desc.groups);
        const ConvImpl got = check_pass<T>(p, pass, impl, rng, tol);
        if (got == impl) ran[pass].insert(impl);
        if (::testing::Test::HasFailure()) return ran;
      }
    }
  }
  return ran;
}

TEST(ConvImpl, EveryFloatImplementationMatchesTheReference) {
  const auto ran = check_every_impl<float>(1e-4);
  for (ConvPass pass : kPasses) {
    EXPECT_TRUE(ran.at(pass).count(ConvImpl::kChannelsLast));
    EXPECT_TRUE(ran.at(pass).count(ConvImpl::kReference));
  }
  EXPECT_TRUE(ran.at(ConvPass::kBackwardData).count(ConvImpl::kAdjointForward));
  for (ConvPass pass : kPasses) {
    EXPECT_TRUE(ran.at(pass).count(ConvImpl::kInnerProduct));
  }
  // oneDNN picks 16-channel blocks with AVX-512, 8-channel ones with AVX2
  // only: each blocked implementation runs where its CPU is.
  std::size_t blocked16 = 0, blocked8 = 0;
  for (ConvPass pass : kPasses) {
    blocked16 += ran.at(pass).count(ConvImpl::kBlocked16);
    blocked8 += ran.at(pass).count(ConvImpl::kBlocked8);
  }
  std::printf(
      "[   INFO   ] blocked16 ran on %zu passes, blocked8 on %zu "
      "(oneDNN picks 16-channel blocks with AVX-512, 8 with AVX2)\n",
      blocked16, blocked8);
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_GT(blocked16, 0u) << "AVX-512, yet blocked16 ran nowhere";
  } else if (__builtin_cpu_supports("avx2")) {
    EXPECT_GT(blocked8, 0u) << "AVX2, yet blocked8 ran nowhere";
  } else {
    GTEST_SKIP() << "neither AVX-512 nor AVX2: oneDNN picks no blocked "
                    "layout here, so no blocked implementation ran";
  }
}

TEST(ConvImpl, DoubleRunsTheReferenceWhateverIsAsked) {
  const auto ran = check_every_impl<double>(1e-12);
  for (ConvPass pass : kPasses) {
    EXPECT_EQ(ran.at(pass), std::set<ConvImpl>{ConvImpl::kReference});
  }
}

// bf16 and fp16 inputs are exact in fp32; outputs are rounded once to the
// type (native16: with the weights rounded to it, fp32 accumulation).
template <typename N>
class NarrowConvImpl : public ::testing::Test {};
using NarrowTypes = GtestTypes<NarrowTypeList>;
TYPED_TEST_SUITE(NarrowConvImpl, NarrowTypes);

TYPED_TEST(NarrowConvImpl, ImplementationsMatchTheReferenceInFp32) {
  using N = TypeParam;
  const auto ran = check_every_impl<N>(std::is_same_v<N, bf16> ? 0.08 : 0.01);
  std::size_t native = 0;
  for (ConvPass pass : kPasses) {
    EXPECT_TRUE(ran.at(pass).count(ConvImpl::kChannelsLast));
    native += ran.at(pass).count(ConvImpl::kNative16);
  }
  if (native == 0) {
    GTEST_SKIP() << "oneDNN has no "
                 << (std::is_same_v<N, bf16> ? "bf16" : "fp16")
                 << " convolution kernel for this CPU: native16 ran nowhere";
  }
}

TEST(ConvImpl, Native16IsForSixteenBitTensors) {
  ConvDesc d = ConvDesc::make(16, 16, {3, 3});
  const Shape x{1, 16, 6, 6};
  const Shape s = dense_strides(x, StorageOrder::kChannelsLast);
  const Shape y = d.dst_shape(x);
  const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
  const LocalConv<float> k(d, x, s, y, ys, ConvPass::kForward,
                           ConvImpl::kNative16);
  EXPECT_EQ(k.impl(), ConvImpl::kChannelsLast);
  EXPECT_NE(k.why_not().find("bf16 and fp16"), std::string::npos)
      << k.why_not();
}

TEST(ConvImpl, ExcludedImplementationsSayWhy) {
  ConvDesc d = ConvDesc::make(8, 8, {3, 3});
  d.stride = {2, 1};
  EXPECT_NE(
      conv_impl_excluded(ConvImpl::kAdjointForward, d, ConvPass::kBackwardData)
          .find("stride 1"),
      std::string::npos);
  EXPECT_NE(conv_impl_excluded(ConvImpl::kAdjointForward, d, ConvPass::kForward)
                .find("backward-data only"),
            std::string::npos);
  d.stride = {1, 1};
  d.padding_lower = {3, 0};
  EXPECT_NE(
      conv_impl_excluded(ConvImpl::kAdjointForward, d, ConvPass::kBackwardData)
          .find("padding"),
      std::string::npos);
  EXPECT_EQ(conv_impl_excluded(ConvImpl::kChannelsLast, d, ConvPass::kForward),
            "");
  // A kernel asked for it falls back to channels-last and says why.
  const LocalConv<float> k(
      d, Shape{1, 8, 6, 6},
      dense_strides(Shape{1, 8, 6, 6}, StorageOrder::kChannelsLast),
      d.dst_shape(Shape{1, 8, 6, 6}),
      dense_strides(d.dst_shape(Shape{1, 8, 6, 6}),
                    StorageOrder::kChannelsLast),
      ConvPass::kBackwardData, ConvImpl::kAdjointForward);
  EXPECT_EQ(k.requested(), ConvImpl::kAdjointForward);
  EXPECT_EQ(k.impl(), ConvImpl::kChannelsLast);
  EXPECT_NE(k.why_not().find("padding"), std::string::npos) << k.why_not();
}

// The inner product: dense layers only, and it says why not.
TEST(ConvImpl, TheInnerProductRunsDenseLayersOnly) {
  const ConvDesc dense = ConvDesc::make(8, 4, {3, 2});
  const Shape x{2, 8, 3, 2};
  EXPECT_TRUE(covers_input(dense, x));
  EXPECT_FALSE(covers_input(dense, Shape{2, 8, 3, 3}));
  EXPECT_FALSE(covers_input(dense, Shape{2, 8, 3, 2, 1}));
  for (ConvPass pass : kPasses) {
    EXPECT_EQ(conv_impl_excluded(ConvImpl::kInnerProduct, dense, pass), "");
  }
  ConvDesc padded = dense;  // a piece: 2 of the kernel's 3 rows
  padded.padding_lower = {1, 0};
  EXPECT_TRUE(covers_input(padded, Shape{2, 8, 2, 2}));
  EXPECT_FALSE(covers_input(padded, x));
  ConvDesc grouped = dense;
  grouped.groups = 2;
  ConvDesc circular = padded;
  circular.padding_mode = {PaddingMode::kCircular, PaddingMode::kZeros};
  ConvDesc dilated = dense;
  dilated.dilation = {2, 1};
  for (const auto& [d, why] :
       {std::pair{grouped, "groups 1"}, std::pair{circular, "zeros only"},
        std::pair{dilated, "no dilation"}}) {
    EXPECT_NE(conv_impl_excluded(ConvImpl::kInnerProduct, d, ConvPass::kForward)
                  .find(why),
              std::string::npos)
        << why;
    EXPECT_FALSE(covers_input(d, x)) << why;
    EXPECT_FALSE(covers_input(d, Shape{2, 8, 2, 2})) << why;
  }
  // Asked for on a convolution that does not cover its input, a kernel
  // falls back to channels-last and says why.
  const Shape big{2, 8, 5, 2};
  const Shape y = dense.dst_shape(big);
  const LocalConv<float> k(dense, big,
                           dense_strides(big, StorageOrder::kChannelsLast), y,
                           dense_strides(y, StorageOrder::kChannelsLast),
                           ConvPass::kForward, ConvImpl::kInnerProduct);
  EXPECT_EQ(k.impl(), ConvImpl::kChannelsLast);
  EXPECT_NE(k.why_not().find("dense layers only"), std::string::npos)
      << k.why_not();
}

// The heuristic's pick for `pass` of `d` on a 2 x C x 12 x 12 input.
ConvImpl heuristic_on_12x12(const ConvDesc& d, ConvPass pass) {
  const Shape x{2, d.in_channels, 12, 12};
  return heuristic_conv_impl(d, pass, x, d.dst_shape(x));
}

TEST(ConvImpl, HeuristicFollowsItsRules) {
  ConvDesc d = ConvDesc::make(16, 16, {3, 3});
  d.padding_lower = d.padding_upper = {1, 1};
  EXPECT_EQ(heuristic_on_12x12(d, ConvPass::kForward), ConvImpl::kChannelsLast);
  EXPECT_EQ(heuristic_on_12x12(d, ConvPass::kBackwardData),
            ConvImpl::kAdjointForward);
  EXPECT_EQ(heuristic_on_12x12(d, ConvPass::kBackwardWeights),
            ConvImpl::kChannelsLast);
  d.stride = {2, 2};
  EXPECT_EQ(heuristic_on_12x12(d, ConvPass::kBackwardData),
            ConvImpl::kChannelsLast);
  ConvDesc narrow = ConvDesc::make(16, 4, {3, 3});
  EXPECT_EQ(heuristic_on_12x12(narrow, ConvPass::kBackwardData),
            ConvImpl::kChannelsLast);
  // 16-channel blocked copies only when asked for or measured faster;
  // 8-channel ones for backward-weights where the input or the output has
  // 24 channels per group or more, where oneDNN picks them (AVX2 without
  // AVX-512).
  ConvDesc wide = ConvDesc::make(64, 64, {3, 3});
  for (ConvPass pass : kPasses) {
    EXPECT_NE(heuristic_on_12x12(wide, pass), ConvImpl::kBlocked16);
  }
  EXPECT_EQ(heuristic_on_12x12(wide, ConvPass::kForward),
            ConvImpl::kChannelsLast);
  const bool avx2_only =
      __builtin_cpu_supports("avx2") && !__builtin_cpu_supports("avx512f");
  EXPECT_EQ(heuristic_on_12x12(wide, ConvPass::kBackwardWeights),
            avx2_only ? ConvImpl::kBlocked8 : ConvImpl::kChannelsLast);
  ConvDesc grouped = ConvDesc::make(64, 64, {3, 3});
  grouped.groups = 4;  // 16 channels per group
  EXPECT_EQ(heuristic_on_12x12(grouped, ConvPass::kBackwardWeights),
            ConvImpl::kChannelsLast);
  for (const ConvDesc& one_wide :
       {ConvDesc::make(64, 16, {3, 3}), ConvDesc::make(8, 32, {3, 3})}) {
    EXPECT_EQ(heuristic_on_12x12(one_wide, ConvPass::kBackwardWeights),
              avx2_only ? ConvImpl::kBlocked8 : ConvImpl::kChannelsLast);
  }
  EXPECT_EQ(heuristic_on_12x12(ConvDesc::make(18, 16, {3, 3}),
                               ConvPass::kBackwardWeights),
            ConvImpl::kChannelsLast);
  // Narrower sides on AVX2 only: whole 8-channel blocks, one side of 16 or
  // more, images at least 256 wide.
  const auto on_256_wide = [](Index c, Index f) {
    ConvDesc narrow_sides = ConvDesc::make(c, f, {3, 3});
    narrow_sides.padding_lower = narrow_sides.padding_upper = {1, 1};
    const Shape x{2, c, 4, 256};
    return heuristic_conv_impl(narrow_sides, ConvPass::kBackwardWeights, x,
                               narrow_sides.dst_shape(x));
  };
  EXPECT_EQ(on_256_wide(16, 16),
            avx2_only ? ConvImpl::kBlocked8 : ConvImpl::kChannelsLast);
  EXPECT_EQ(on_256_wide(16, 8),
            avx2_only ? ConvImpl::kBlocked8 : ConvImpl::kChannelsLast);
  EXPECT_EQ(on_256_wide(8, 8), ConvImpl::kChannelsLast);
  EXPECT_EQ(on_256_wide(18, 16), ConvImpl::kChannelsLast);
  EXPECT_EQ(heuristic_on_12x12(ConvDesc::make(16, 16, {3, 3}),
                               ConvPass::kBackwardWeights),
            ConvImpl::kChannelsLast);
}

// Backward-data as the adjoint forward only where the output gradient is
// nowhere smaller than the input gradient: not for windows that shrink the
// input (no padding, a kernel covering the whole input: a dense layer),
// but for a piece whose output gradient carries a halo.
TEST(ConvImpl, HeuristicKeepsTheAdjointForwardToWindowsThatKeepTheExtent) {
  const ConvPass bwd_d = ConvPass::kBackwardData;
  ConvDesc same = ConvDesc::make(16, 16, {3, 3});
  same.padding_lower = same.padding_upper = {1, 1};
  EXPECT_EQ(heuristic_on_12x12(same, bwd_d), ConvImpl::kAdjointForward);
  EXPECT_EQ(heuristic_on_12x12(ConvDesc::make(16, 16, {3, 3}), bwd_d),
            ConvImpl::kChannelsLast);
  EXPECT_EQ(heuristic_on_12x12(ConvDesc::make(16, 16, {12, 12}), bwd_d),
            ConvImpl::kInnerProduct);  // a dense layer
  ConvDesc piece = ConvDesc::make(16, 16, {3, 3});
  piece.padding_lower = piece.padding_upper = {2, 1};  // 5 rows from 7
  EXPECT_EQ(heuristic_conv_impl(piece, bwd_d, Shape{2, 16, 5, 12},
                                Shape{2, 16, 7, 12}),
            ConvImpl::kAdjointForward);
}

// A dense layer as the inner product in every pass, pieces of one split
// over ranks included; a convolution whose kernel does not cover its
// input by the other rules (no adjoint: the window shrinks the input).
TEST(ConvImpl, HeuristicRunsDenseLayersAsTheInnerProduct) {
  const ConvDesc dense3d = ConvDesc::make(64, 64, {4, 4, 4});
  const Shape y{4, 64, 1, 1, 1};
  ConvDesc piece = dense3d;
  piece.padding_upper = {2, 0, 0};  // the first 2 of 4 planes
  for (ConvPass pass : kPasses) {
    EXPECT_EQ(heuristic_conv_impl(dense3d, pass, Shape{4, 64, 4, 4, 4}, y),
              ConvImpl::kInnerProduct);
    EXPECT_EQ(heuristic_conv_impl(dense3d, pass, Shape{256, 64, 4, 4, 4},
                                  Shape{256, 64, 1, 1, 1}),
              ConvImpl::kInnerProduct);
    EXPECT_EQ(heuristic_conv_impl(piece, pass, Shape{4, 64, 2, 4, 4}, y),
              ConvImpl::kInnerProduct);
    EXPECT_EQ(heuristic_conv_impl(dense3d, pass, Shape{4, 64, 5, 4, 4},
                                  Shape{4, 64, 2, 1, 1}),
              ConvImpl::kChannelsLast);
  }
  const Shape x{4, 64, 4, 4, 4};
  const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
  const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
  EXPECT_EQ(
      heuristic_local_conv_impl<bf16>(dense3d, x, xs, y, ys, ConvPass::kForward,
                                      ConvImpl::kInnerProduct),
      ConvImpl::kInnerProduct);
}

// 16-bit pieces on oneDNN's own kernels: on AMX tiles on any CPU, on
// AVX512-BF16 only on AMD's; never where oneDNN names another kernel.
TEST(ConvImpl, HeuristicTakesNative16WhereItsKernelIsFast) {
  for (CpuVendor v : {CpuVendor::kAmd, CpuVendor::kOther}) {
    EXPECT_TRUE(
        heuristic_takes_native16("brgconv:avx512_core_amx, in place", v));
    EXPECT_FALSE(heuristic_takes_native16("brgconv:avx2, in place", v));
    EXPECT_FALSE(heuristic_takes_native16(
        "native16 does not apply: oneDNN has no bf16 convolution", v));
  }
  for (const char* bf16_kernel :
       {"brgconv:avx512_core_bf16, in place",
        "brg_fwd:avx512_core_bf16+brgconv:avx512_core_bf16, in place",
        "jit_bf16:avx512_core_bf16, per sample"}) {
    EXPECT_TRUE(heuristic_takes_native16(bf16_kernel, CpuVendor::kAmd));
    EXPECT_FALSE(heuristic_takes_native16(bf16_kernel, CpuVendor::kOther));
  }
}

// heuristic_local_conv_impl() follows that rule on this CPU: native16 for
// a bf16 piece exactly where the rule takes the kernel oneDNN runs for it,
// the planned implementation otherwise and for fp32.
TEST(ConvImpl, HeuristicLocalImplFollowsTheRuleOnThisCpu) {
  ConvDesc d = ConvDesc::make(16, 16, {3, 3});
  d.padding_lower = d.padding_upper = {1, 1};
  const Shape x{2, 16, 12, 12};
  const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
  const Shape y = d.dst_shape(x);
  const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
  for (ConvPass pass : kPasses) {
    const ConvImpl planned = heuristic_conv_impl(d, pass, x, y);
    const LocalConv<bf16> native(d, x, xs, y, ys, pass, ConvImpl::kNative16);
    SCOPED_TRACE(native.implementation());
    const bool takes =
        native.impl() == ConvImpl::kNative16 &&
        heuristic_takes_native16(native.implementation(), this_cpu_vendor());
    EXPECT_EQ(heuristic_local_conv_impl<bf16>(d, x, xs, y, ys, pass, planned),
              takes ? ConvImpl::kNative16 : planned);
    EXPECT_EQ(heuristic_local_conv_impl<float>(d, x, xs, y, ys, pass, planned),
              planned);
  }
}

TEST(ConvImpl, NamesRoundTrip) {
  for (ConvPass pass : kPasses) {
    const std::vector<ConvImpl> list = conv_impl_list(pass);
    EXPECT_EQ(list.back(), ConvImpl::kReference);
    for (ConvImpl impl : list) {
      EXPECT_EQ(conv_impl_named(to_string(impl), "--x"), impl);
    }
  }
  EXPECT_THROW(conv_impl_named("fastest", "--x"), Error);
}

// The search keeps the fastest as the timer reports it, never the loops
// where oneDNN runs, and only implementations that run as asked.
TEST(ConvImplSearch, PicksTheFastestThatRuns) {
  ConvDesc d = ConvDesc::make(16, 16, {3, 3});
  d.padding_lower = d.padding_upper = {1, 1};
  const Shape x{1, 16, 8, 8};
  const Shape s = dense_strides(x, StorageOrder::kChannelsLast);
  for (ConvImpl fast : {ConvImpl::kAdjointForward, ConvImpl::kChannelsLast}) {
    ConvImplSearchOptions o;
    o.timer = [fast](ConvImpl impl, const std::function<void()>& run) {
      run();
      return impl == fast ? 1.0f : 2.0f;
    };
    const std::vector<ConvImplTiming> all =
        time_conv_impl_list<float>(d, x, s, x, s, ConvPass::kBackwardData, o);
    for (const ConvImplTiming& t : all) EXPECT_NE(t.impl, ConvImpl::kReference);
    const ConvImplTiming pick =
        time_conv_impls<float>(d, x, s, x, s, ConvPass::kBackwardData, o);
    EXPECT_EQ(pick.impl, fast);
    EXPECT_EQ(pick.ms, 1.0f);
  }
  // fp64: the loops are all there is.
  const ConvImplTiming pick = time_conv_impls<double>(
      d, x, s, x, s, ConvPass::kForward, ConvImplSearchOptions{});
  EXPECT_EQ(pick.impl, ConvImpl::kReference);
}

}  // namespace
}  // namespace distconv
