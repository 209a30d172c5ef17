// The convolution's and the transposed convolution's kernel choice
// (CpuConvOptions): measured layers compute what the heuristic ones do
// (in place: perf/bench_check_test.sh);
// ranks whose timings differ (a stand-in timer) run the same
// implementation for the same problem; a cache (in memory or from a file)
// spares the timing; ranks that disagree on the search throw the same
// distconv::Error on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "kernels/kernel_cache.h"
#include "layers/convolution.h"
#include "layers/deconvolution.h"
#include "layers/shared_kernel_cache.h"
#include "tests/conv_check.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::world_rank;
using testing::world_size;

ConvDesc conv_desc() {
  ConvDesc d = ConvDesc::make(16, 16, {3, 3});
  d.padding_lower = d.padding_upper = {1, 1};
  d.bias = ConvBias::kAdd;
  return d;
}

// The global y, dx, dw and db of one training step on fixed inputs.
template <typename Layer>
std::vector<std::vector<float>> step(const ProcessGrid& grid, Layer& layer,
                                     const Shape& w_shape, Index filters) {
  const Shape xs = layer.src_layout().distribution().global_shape();
  const Shape ys = layer.dst_layout().distribution().global_shape();
  DistTensor<float> x(grid, layer.src_layout()), y(grid, layer.dst_layout());
  DistTensor<float> dy(grid, layer.diff_dst_layout());
  DistTensor<float> dx(grid, layer.diff_src_layout());
  scatter(random_vector<float>(xs.volume(), 1).data(), x, 0);
  scatter(random_vector<float>(ys.volume(), 2).data(), dy, 0);
  const auto w = random_vector<float>(w_shape.volume(), 3);
  const auto b = random_vector<float>(filters, 4);
  std::vector<float> dw(w.size()), db(b.size());
  layer.forward(x, w.data(), b.data(), y);
  layer.backward_weights(x, dy, dw.data(), db.data());
  layer.backward_data(dy, w.data(), dx);
  layer.wait_gradients();
  return {gathered(y), gathered(dx), dw, db};
}

void expect_close(const std::vector<std::vector<float>>& got,
                  const std::vector<std::vector<float>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t t = 0; t < got.size(); ++t) {
    ASSERT_EQ(got[t].size(), want[t].size());
    for (std::size_t i = 0; i < got[t].size(); ++i) {
      ASSERT_NEAR(got[t][i], want[t][i], 2e-4) << "tensor " << t << " at " << i;
    }
  }
}

// The kernels of a describe(), one per line, without the boxes.
std::string kernels_of(const std::string& described) {
  std::istringstream in(described);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    out += line.substr(0, line.find(' ')) + ": " +
           line.substr(line.find("): ") + 3) + "\n";
  }
  return out;
}

// Rank 0's string on every rank.
std::string rank0s(const std::string& mine) {
  int n = static_cast<int>(mine.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string out = mine;
  out.resize(n);
  MPI_Bcast(out.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

TEST(ConvImplChoice, MeasuredComputesWhatTheHeuristicDoes) {
  // H split unevenly over every rank: pieces of several shapes.
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const Distribution src(Shape{2, 16, 4 * world_size() + 3, 9}, grid.shape());
  const ConvDesc d = conv_desc();
  ConvolutionOptions measured;
  measured.cpu.search = ConvImplSearch::kMeasured;
  Convolution<float> a(grid, d, src), b(grid, d, src, measured);
  expect_close(step(grid, b, d.weights_shape(), 16),
               step(grid, a, d.weights_shape(), 16));
  DeconvDesc up = DeconvDesc::make(16, 8, {2, 2});
  up.stride = {2, 2};
  up.bias = ConvBias::kAdd;
  DeconvolutionOptions measured_up;
  measured_up.cpu.search = ConvImplSearch::kMeasured;
  Deconvolution<float> c(grid, up, src), e(grid, up, src, measured_up);
  expect_close(step(grid, e, up.weights_shape(), 8),
               step(grid, c, up.weights_shape(), 8));
}

// Every rank holds two samples of the same image: equal problems. Rank r's
// stand-in timer makes adjoint_forward fastest on even ranks and
// channels_last on odd ones, each rank slower than the one before; all
// run what rank 0 timed fastest (adjoint_forward for backward-data).
TEST(ConvImplChoice, RanksRunTheFastestAnyRankFound) {
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{world_size(), 1, 1, 1});
  const Distribution src(Shape{2 * world_size(), 16, 12, 9}, grid.shape());
  const int r = world_rank();
  ConvolutionOptions o;
  o.cpu.search = ConvImplSearch::kMeasured;
  o.cpu.timing.timer = [r](ConvImpl impl, const std::function<void()>&) {
    const ConvImpl mine =
        r % 2 == 0 ? ConvImpl::kAdjointForward : ConvImpl::kChannelsLast;
    return impl == mine ? 1.0f + r : 100.0f;
  };
  Convolution<float> conv(grid, conv_desc(), src, o);
  const std::string mine = kernels_of(conv.describe());
  EXPECT_EQ(mine, rank0s(mine));
  EXPECT_NE(mine.find("backward-data: "), std::string::npos) << mine;
  std::istringstream lines(mine);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("backward-data", 0) == 0) {
      EXPECT_NE(line.find("as the adjoint forward"), std::string::npos) << line;
    }
  }
}

// A stand-in timer: runs each candidate once and counts the runs.
ConvImplTimer counting_timer(int* timed) {
  return [timed](ConvImpl, const std::function<void()>& run) {
    ++*timed;
    run();
    return 1.0f;
  };
}

TEST(ConvImplChoice, ACacheSparesTheTiming) {
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const Distribution src(Shape{1, 16, 5 * world_size(), 8}, grid.shape());
  int timed = 0;
  ConvolutionOptions o;
  o.cpu.search = ConvImplSearch::kMeasured;
  o.cpu.cache = std::make_shared<KernelCache>();
  o.cpu.timing.timer = counting_timer(&timed);
  Convolution<float> first(grid, conv_desc(), src, o);
  const int after_first = timed;
  EXPECT_GT(after_first, 0);
  EXPECT_GT(o.cpu.cache->size(), 0u);
  // Each problem timed once (pieces of one problem take the first's).
  const std::size_t misses = o.cpu.cache->misses();
  const std::size_t hits = o.cpu.cache->hits();
  EXPECT_EQ(misses, o.cpu.cache->size());
  Convolution<float> second(grid, conv_desc(), src, o);
  EXPECT_EQ(timed, after_first);
  EXPECT_EQ(o.cpu.cache->misses(), misses);
  EXPECT_EQ(o.cpu.cache->hits(), 2 * hits + misses);
  EXPECT_EQ(kernels_of(second.describe()), kernels_of(first.describe()));
  // Through a file (one per rank): a fresh cache read from it times
  // nothing either.
  const std::string path =
      testing::temp_path("choices.cache." + std::to_string(world_rank()));
  o.cpu.cache->save(path);
  auto from_file = std::make_shared<KernelCache>();
  EXPECT_EQ(from_file->load(path), "");
  o.cpu.cache = from_file;
  Convolution<float> third(grid, conv_desc(), src, o);
  EXPECT_EQ(timed, after_first);
  EXPECT_EQ(kernels_of(third.describe()), kernels_of(first.describe()));
  std::remove(path.c_str());
}

// A layer's pieces of one problem (the strips of the output next to the
// halos above and below a middle rank's shard) are timed once, with the
// caller's cache or without one.
TEST(ConvImplChoice, PiecesOfOneProblemAreTimedOnce) {
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const Distribution src(Shape{1, 16, 6 * world_size(), 8}, grid.shape());
  int timed = 0;
  ConvolutionOptions o;
  o.cpu.search = ConvImplSearch::kMeasured;
  o.cpu.timing.timer = counting_timer(&timed);
  auto cache = std::make_shared<KernelCache>();
  o.cpu.cache = cache;
  Convolution<float> with_cache(grid, conv_desc(), src, o);
  EXPECT_EQ(cache->misses(), cache->size());
  if (world_rank() > 0 && world_rank() < world_size() - 1) {
    EXPECT_GT(cache->hits(), 0u) << "no two pieces share a problem here";
  }
  const int timed_with_cache = timed;
  EXPECT_GT(timed_with_cache, 0);
  timed = 0;
  o.cpu.cache = nullptr;
  Convolution<float> without(grid, conv_desc(), src, o);
  EXPECT_EQ(timed, timed_with_cache);
  EXPECT_EQ(kernels_of(without.describe()), kernels_of(with_cache.describe()));
}

// Each rank's own entry, and one all ranks timed differently: afterwards
// every rank holds every entry, the shared one at its fastest time.
TEST(ConvImplChoice, SharingGivesEveryRankEveryChoice) {
  KernelCache cache;
  const int r = world_rank();
  cache.put(1000 + r, {ConvImpl::kBlocked16, 1.0f * r});
  cache.put(7, {r == world_size() - 1 ? ConvImpl::kAdjointForward
                                      : ConvImpl::kChannelsLast,
                r == world_size() - 1 ? 0.5f : 2.0f + r});
  share_kernel_cache(MPI_COMM_WORLD, cache);
  EXPECT_EQ(cache.size(), static_cast<std::size_t>(world_size() + 1));
  for (int q = 0; q < world_size(); ++q) {
    ASSERT_TRUE(cache.find_conv(1000 + q).has_value()) << q;
    EXPECT_EQ(cache.find_conv(1000 + q)->ms, 1.0f * q);
  }
  EXPECT_EQ(cache.find_conv(7)->impl, ConvImpl::kAdjointForward);
  EXPECT_EQ(cache.find_conv(7)->ms, 0.5f);
}

// Pooling's choices travel too, apart from the convolutions'.
TEST(ConvImplChoice, SharingCarriesPoolingChoices) {
  KernelCache cache;
  const int r = world_rank();
  cache.put(7, {ConvImpl::kChannelsLast, 1.0f});
  cache.put(7, {r == 0 ? PoolImpl::kOneCall : PoolImpl::kSlabs,
                r == 0 ? 0.25f : 1.0f + r});
  cache.put(2000 + r, {PoolImpl::kSlabs, 1.0f * r});
  share_kernel_cache(MPI_COMM_WORLD, cache);
  EXPECT_EQ(cache.size(), static_cast<std::size_t>(world_size() + 2));
  EXPECT_EQ(cache.find_conv(7)->impl, ConvImpl::kChannelsLast);
  EXPECT_EQ(cache.find_pool(7)->impl, PoolImpl::kOneCall);
  EXPECT_EQ(cache.find_pool(7)->ms, 0.25f);
  for (int q = 0; q < world_size(); ++q) {
    ASSERT_TRUE(cache.find_pool(2000 + q).has_value()) << q;
    EXPECT_FALSE(cache.find_conv(2000 + q).has_value()) << q;
  }
}

TEST(ConvImplChoice, RanksThatDisagreeOnTheSearchThrowOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const Distribution src(Shape{1, 16, 3 * world_size(), 8}, grid.shape());
  ConvolutionOptions o;
  if (world_rank() == 1) o.cpu.search = ConvImplSearch::kMeasured;
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch, "kernel choice",
      [&] { Convolution<float> conv(grid, conv_desc(), src, o); });
  DeconvolutionOptions u;
  if (world_rank() == 1) u.cpu.search = ConvImplSearch::kMeasured;
  DeconvDesc up = DeconvDesc::make(16, 8, {2, 2});
  up.stride = {2, 2};
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch, "kernel choice",
      [&] { Deconvolution<float> d(grid, up, src, u); });
}

}  // namespace
}  // namespace distconv
