// CudnnConv against the reference loops (kernels/reference/conv.h) on
// random problems: 2D and 3D, groups, stride, dilation, asymmetric padding,
// bias, views inside larger channels-last and channels-first buffers (as a
// shard sits inside its halos). fp64 to 1e-10, fp32 to 1e-5; TF32, bf16
// and fp16 (fp32 weights, 16-bit tensors) within their rounding. Skips,
// visibly, on a machine without a GPU. Also the cuDNN context an
// execution context and its copies share (cudnn_context()).
#include "kernels/cudnn/conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/exec.h"
#include "kernels/cudnn/cudnn_context.h"
#include "kernels/device_view_testing.h"
#include "kernels/reference/conv.h"
#include "kernels/view_testing.h"
#include "tests/expect_close.h"

namespace distconv {
namespace {

using testing::dense_of;
using testing::DeviceArray;
using testing::DeviceView;
using testing::embed;
using testing::Embedded;
using testing::expect_close;

bool have_gpu() { return DeviceSpace::device_count() > 0; }

// The values of T as Compute<T> (the reference loops' type).
template <typename T>
std::vector<Compute<T>> widen(const std::vector<T>& v) {
  return std::vector<Compute<T>>(v.begin(), v.end());
}
#define SKIP_WITHOUT_GPU()                                              \
  if (!have_gpu()) {                                                    \
    GTEST_SKIP() << "no CUDA device on this machine: GPU test not run"; \
  }

// Weights, bias and their gradients are Compute<T>; every value drawn is
// one T holds exactly, so that cuDNN and the reference read the same.
template <typename T>
void CheckRandomPieces(const GpuConvOptions& options, double tol, int trials) {
  using P = Compute<T>;
  std::mt19937_64 rng(5);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  std::uniform_real_distribution<double> uniform(-1, 1);
  auto val = [&](std::mt19937_64& r) { return T(uniform(r)); };
  CudnnContext ctx;
  int run = 0;
  for (int trial = 0; run < trials && trial < 10 * trials; ++trial) {
    const std::optional<testing::ConvProblem> problem =
        testing::random_conv_problem(rng, 4, 8);
    if (!problem) continue;
    const ConvDesc& c = problem->desc;
    const Shape& src = problem->src;
    ++run;
    const Shape dst = c.dst_shape(src);
    const bool dense = u(0, 1);
    const StorageOrder order =
        u(0, 1) ? StorageOrder::kChannelsLast : StorageOrder::kChannelsFirst;
    Embedded<T> x = embed<T>(src, rng, dense, order);
    Embedded<T> y = embed<T>(dst, rng, dense, order);
    Embedded<T> dx = embed<T>(src, rng, dense, order);
    std::vector<P> w(c.weights_shape().volume()), b(c.out_channels);
    for (P& v : w) v = val(rng);
    for (P& v : b) v = val(rng);
    x.view.for_each([&](const Shape&, T& v) { v = val(rng); });
    y.view.for_each([&](const Shape&, T& v) { v = val(rng); });
    const std::vector<P> x0 = widen(dense_of(x.view)),
                         y0 = widen(dense_of(y.view));
    const bool has_bias = c.bias == ConvBias::kAdd;
    DeviceArray<P> dw_dev(w), db_dev(b);
    DeviceView<T> xd(x), yd(y), dxd(dx);

    // Forward.
    CudnnConv<T> f(ctx, c, src, x.view.strides(), dst, y.view.strides(),
                   ConvPass::kForward, options);
    SCOPED_TRACE(::testing::Message()
                 << "trial " << trial << ": " << f.implementation() << ", src "
                 << src << ", kernel " << c.kernel << ", stride " << c.stride
                 << ", dilation " << c.dilation << ", padding "
                 << c.padding_lower << "/" << c.padding_upper << ", groups "
                 << c.groups);
    std::vector<P> want(dst.volume());
    reference::conv_fwd(c, src, x0.data(), w.data(),
                        has_bias ? b.data() : nullptr, dst, want.data());
    DeviceView<T> yf(y);
    f.forward(xd.view, dw_dev.data, has_bias ? db_dev.data : nullptr,
              yf.view);
    expect_close(widen(yf.cells(y)), want, tol, "forward");

    // Backward-data overwrites the view (and nothing around it).
    CudnnConv<T> bd(ctx, c, src, dx.view.strides(), dst, y.view.strides(),
                    ConvPass::kBackwardData, options);
    std::vector<P> want_dx(src.volume());
    reference::conv_bwd_data(c, dst, y0.data(), w.data(), src, want_dx.data());
    bd.backward_data(yd.view, dw_dev.data, dxd.view);
    expect_close(widen(dxd.cells(dx)), want_dx, tol, "backward data");
    std::vector<T> around = dxd.buffer.read();
    StridedView<T>(around.data() + (dx.view.data() - dx.buffer.data()), src,
                   dx.view.strides())
        .for_each([](const Shape&, T& v) { v = T(-7); });
    for (size_t i = 0; i < around.size(); ++i) {
      ASSERT_EQ(around[i], T(-7)) << "backward data wrote outside its view";
    }

    // Backward-weights adds to what is there.
    std::vector<P> want_dw(w.size()), want_db(b.size());
    reference::conv_bwd_weights(c, src, x0.data(), dst, y0.data(),
                                want_dw.data(), want_db.data());
    std::vector<P> ones_w(w.size(), P(1)), ones_b(b.size(), P(1));
    DeviceArray<P> gw(ones_w), gb(ones_b);
    CudnnConv<T> bw(ctx, c, src, x.view.strides(), dst, y.view.strides(),
                    ConvPass::kBackwardWeights, options);
    bw.backward_weights(xd.view, yd.view, gw.data,
                        has_bias ? gb.data : nullptr);
    for (P& v : want_dw) v += 1;
    expect_close(gw.read(), want_dw, tol, "diff weights");
    if (has_bias) {
      for (P& v : want_db) v += 1;
      expect_close(gb.read(), want_db, tol, "diff bias");
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(run, trials);
}

TEST(CudnnConv, DoubleMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  CheckRandomPieces<double>({}, 1e-10, 60);
}

TEST(CudnnConv, FloatMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  CheckRandomPieces<float>({}, 1e-5, 60);
}

TEST(CudnnConv, Bf16IsWithinItsRounding) {
  SKIP_WITHOUT_GPU();
  // fp32 sums of exact products, each result rounded once to bf16 (8
  // significant bits); gradients rounded once before they are added.
  CheckRandomPieces<bf16>({}, 1e-2, 40);
}

TEST(CudnnConv, Fp16IsWithinItsRounding) {
  SKIP_WITHOUT_GPU();
  // The same with 11 significant bits: one rounding is 2^-11.
  CheckRandomPieces<fp16>({}, 2e-3, 40);
}

TEST(CudnnConv, MeasuredSearchMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  GpuConvOptions o;
  o.search = GpuAlgoSearch::kMeasured;
  CheckRandomPieces<float>(o, 1e-5, 15);
}

// A kernel made with a cache runs the algorithm cached for its problem
// without timing cuDNN's (the layers put what their ranks agreed on);
// without an entry it searches, as without a cache.
TEST(CudnnConv, ACachedChoiceIsTakenWithoutASearch) {
  SKIP_WITHOUT_GPU();
  CudnnContext ctx;
  ConvDesc c = ConvDesc::make(16, 16, {3, 3});
  c.padding_lower = c.padding_upper = {1, 1};
  const Shape x{1, 16, 32, 32};
  const Shape s = dense_strides(x, StorageOrder::kChannelsLast);
  GpuConvOptions o;
  o.search = GpuAlgoSearch::kMeasured;
  o.cache = std::make_shared<GpuAlgoCache>();
  CudnnConv<float> searched(ctx, c, x, s, x, s, ConvPass::kForward, o);
  EXPECT_EQ(o.cache->misses(), 1u);
  EXPECT_GT(searched.algorithm_ms(), 0.0f);
  // Implicit GEMM (0: every problem has it) with strict fp32's math,
  // whatever the search chose.
  o.cache->put(problem_key(searched.problem()),
               {0, searched.math(), 1e-6f, searched.on_copies()});
  CudnnConv<float> cached(ctx, c, x, s, x, s, ConvPass::kForward, o);
  EXPECT_EQ(o.cache->hits(), 1u);
  EXPECT_EQ(o.cache->misses(), 1u);
  EXPECT_EQ(cached.algorithm(), 0);
  EXPECT_EQ(cached.math(), searched.math());
  EXPECT_EQ(cached.algorithm_ms(), 1e-6f);
  EXPECT_NE(cached.implementation().find("implicit_gemm"), std::string::npos)
      << cached.implementation();
}

TEST(CudnnConv, Tf32IsWithinItsRounding) {
  SKIP_WITHOUT_GPU();
  GpuConvOptions o;
  o.math = GpuMath::kTf32;
  // Inputs rounded to 10 mantissa bits, sums of up to ~300 products of
  // values in [-1, 1].
  CheckRandomPieces<float>(o, 2e-2, 30);
}

TEST(CudnnConv, NamesItsAlgorithmAndTakesAnother) {
  SKIP_WITHOUT_GPU();
  CudnnContext ctx;
  ConvDesc c = ConvDesc::make(16, 16, {3, 3});
  c.padding_lower = c.padding_upper = {1, 1};
  const Shape x{1, 16, 32, 32};
  const Shape s = dense_strides(x, StorageOrder::kChannelsLast);
  CudnnConv<float> f(ctx, c, x, s, x, s, ConvPass::kForward);
  EXPECT_NE(f.implementation().find("channels-last, in place"),
            std::string::npos)
      << f.implementation();
  f.set_algorithm(0, f.math());  // implicit GEMM: every problem has it
  EXPECT_EQ(f.algorithm(), 0);
  EXPECT_NE(f.implementation().find("implicit_gemm"), std::string::npos);
  c.padding_upper = {0, 0};
  CudnnConv<float> edge(
      ctx, c, x, s, Shape{1, 16, 31, 31},
      dense_strides(Shape{1, 16, 31, 31}, StorageOrder::kChannelsLast),
      ConvPass::kForward);
  EXPECT_NE(edge.implementation().find("padded input copy"), std::string::npos)
      << edge.implementation();
}

TEST(CudnnConv, AnOutputOfTheWrongSizeIsRefused) {
  SKIP_WITHOUT_GPU();
  CudnnContext ctx;
  ConvDesc c = ConvDesc::make(4, 4, {3, 3});
  const Shape x{1, 4, 8, 8}, y{1, 4, 8, 8};  // unpadded: 6 x 6
  try {
    CudnnConv<double> f(
        ctx, c, x, dense_strides(x, StorageOrder::kChannelsLast), y,
        dense_strides(y, StorageOrder::kChannelsLast), ConvPass::kForward);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
  }
}

// A context and its copies share one cuDNN context (handle, workspace),
// bound to the context's stream; another context has its own, which
// lives as long as a copy of it does.
TEST(CudnnContext, CopiesOfAnExecShareOne) {
  SKIP_WITHOUT_GPU();
  const Exec<DeviceSpace> a;
  const Exec<DeviceSpace> copy = a;
  CudnnContext& ctx = cudnn_context(a);
  EXPECT_EQ(&ctx, &cudnn_context(copy));
  EXPECT_EQ(ctx.stream(), a.stream());
  ctx.reserve(1024);
  EXPECT_GE(cudnn_context(copy).workspace_size(), 1024u);
  std::optional<Exec<DeviceSpace>> other;
  other.emplace();
  CudnnContext* theirs = &cudnn_context(*other);
  EXPECT_NE(theirs, &ctx);
  const Exec<DeviceSpace> kept = *other;
  other.reset();
  EXPECT_EQ(&cudnn_context(kept), theirs);
}

}  // namespace
}  // namespace distconv
