// Convolution<T, DeviceSpace> against Convolution<T> (host memory) on the
// same data and grids: forward, backward-data, backward-weights (the
// gradients summed over the ranks), 2D and 3D, sample and spatial splits,
// uneven and empty shards, stride, groups, bias; channel and filter
// parallelism (every scheme; host-staged collectives, and NCCL ones where
// each rank has its own GPU) on every grid that splits channels. fp64 to
// 1e-10, fp32 to 1e-5, bf16 and fp16 (fp32 weights) within their
// rounding; timed searches agreed across ranks and shared through a
// cache. Several ranks share one GPU (halos host-staged).
// Skips, visibly, on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/convolution.h"
#include "layers/device_layer_testing.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::world_rank;
using testing::world_size;

class DeviceConvolution : public testing::DeviceLayerTest {};

struct Case {
  Shape global;  // N, C, spatial...
  Shape grid;
  ConvDesc desc;
  ConvolutionOptions options;
};

ConvDesc conv3(Index c, Index f, int dims, Index stride, Index groups,
               ConvBias bias) {
  ConvDesc d = ConvDesc::make(c, f, Shape::filled(dims, 3));
  d.padding_lower = d.padding_upper = Shape::filled(dims, 1);
  d.stride = Shape::filled(dims, stride);
  d.groups = groups;
  d.bias = bias;
  return d;
}

// Grids of exactly world_size() ranks.
std::vector<Case> cases() {
  const ConvDesc same = conv3(4, 6, 2, 1, 1, ConvBias::kAdd);
  const ConvDesc strided = conv3(4, 6, 2, 2, 2, ConvBias::kNone);
  ConvDesc asym = conv3(3, 5, 2, 1, 1, ConvBias::kAdd);
  asym.padding_upper = {0, 2};
  const ConvDesc cube = conv3(2, 3, 3, 1, 1, ConvBias::kAdd);
  std::vector<Case> all = {
      {{2, 4, 12, 10}, {1, 1, 1, 1}, same},
      {{2, 4, 12, 10}, {1, 1, 1, 1}, strided},
      {{1, 3, 9, 11}, {1, 1, 1, 1}, asym},
      {{1, 2, 6, 7, 5}, {1, 1, 1, 1, 1}, cube},
      {{2, 4, 12, 10}, {1, 1, 2, 1}, same},
      {{2, 4, 12, 10}, {2, 1, 1, 1}, strided},
      {{1, 3, 9, 11}, {1, 1, 1, 2}, asym},
      {{1, 2, 6, 7, 5}, {1, 1, 2, 1, 1}, cube},
      {{1, 4, 10, 9}, {1, 1, 3, 1}, same},     // uneven
      {{1, 4, 11, 9}, {1, 1, 1, 3}, strided},  // uneven
      {{2, 4, 12, 10}, {1, 1, 2, 2}, same},
      {{2, 4, 12, 10}, {2, 1, 2, 1}, strided},
      {{1, 4, 3, 8}, {1, 1, 4, 1}, same},  // one shard empty
      {{1, 2, 6, 4, 5}, {1, 1, 2, 2, 1}, cube},
  };
  std::vector<Case> mine;
  for (const Case& c : all) {
    if (c.grid.volume() == world_size()) mine.push_back(c);
  }
  return mine;
}

// Channel and filter parallelism: every grid of world_size() ranks that
// splits channels (alone, with samples, with space), every scheme. The
// channels outnumber the parts; the filters split unevenly on 4.
std::vector<Case> channel_cases() {
  const ConvDesc flat = conv3(8, 6, 2, 1, 1, ConvBias::kAdd);
  const ConvDesc strided = conv3(8, 6, 2, 2, 1, ConvBias::kNone);
  const ConvDesc cube = conv3(4, 5, 3, 1, 1, ConvBias::kAdd);
  std::vector<Case> out;
  for (const ChannelParallelism scheme :
       {ChannelParallelism::kStationaryOutput,
        ChannelParallelism::kStationaryInput,
        ChannelParallelism::kStationaryWeights}) {
    ConvolutionOptions options;
    options.channels = scheme;
    for (const Shape& g : testing::grids_with_channel_split(4)) {
      out.push_back({{2, 8, 9, 10}, g, flat, options});
      out.push_back({{2, 8, 9, 10}, g, strided, options});
    }
    for (const Shape& g : testing::grids_with_channel_split(5)) {
      out.push_back({{2, 4, 5, 6, 4}, g, cube, options});
    }
  }
  return out;
}

template <typename T>
void CheckAgainstTheHost(const Case& c, double tol) {
  SCOPED_TRACE(::testing::Message()
               << "global " << c.global << ", grid " << c.grid << ", kernel "
               << c.desc.kernel << ", stride " << c.desc.stride << ", "
               << to_string(c.options.channels));
  ProcessGrid grid(MPI_COMM_WORLD, c.grid);
  const Distribution dist(c.global, c.grid);
  ConvolutionOptions host_options = c.options;  // a host transport
  host_options.halo = HaloSetupOptions{};
  Convolution<T> host(grid, c.desc, dist, host_options);
  Convolution<T, DeviceSpace> dev(grid, c.desc, dist, c.options);
  ConvPlan want = host.plan();  // but for the transport it names
  want.transport = dev.plan().transport;
  ASSERT_EQ(want, dev.plan());
  std::mt19937_64 rng(17 + world_rank());
  std::uniform_real_distribution<double> val(-1, 1);
  auto random = [&](Index n) {  // values T holds exactly
    std::vector<Compute<T>> v(n);
    for (auto& x : v) x = T(val(rng));
    return v;
  };
  const std::vector<Compute<T>> w =
      random(host.weights_block().extent.volume());
  const std::vector<Compute<T>> b =
      c.desc.bias == ConvBias::kAdd ? random(host.bias_block().extent.volume())
                                    : std::vector<Compute<T>>();
  testing::expect_same_weighted_passes<T>(grid, host, dev, w, b, rng, tol);
}

TEST_F(DeviceConvolution, DoubleMatchesTheHostLayer) {
  for (const Case& c : cases()) CheckAgainstTheHost<double>(c, 1e-10);
}

TEST_F(DeviceConvolution, FloatMatchesTheHostLayer) {
  for (const Case& c : cases()) CheckAgainstTheHost<float>(c, 1e-5);
}

// bf16 tensors (fp32 weights): cuDNN and the host kernels both sum in
// fp32 and round each output once, in different orders; the GPU rounds
// each piece's weight gradient to bf16 once before adding it.
TEST_F(DeviceConvolution, Bf16IsWithinItsRoundingOfTheHostLayer) {
  for (const Case& c : cases()) CheckAgainstTheHost<bf16>(c, 2e-2);
}

// fp16 likewise, within its rounding (2^-11 where bf16's is 2^-8).
TEST_F(DeviceConvolution, Fp16IsWithinItsRoundingOfTheHostLayer) {
  for (const Case& c : cases()) CheckAgainstTheHost<fp16>(c, 4e-3);
}

TEST_F(DeviceConvolution, DoubleChannelSplitsMatchTheHostLayer) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks to split channels";
  for (const Case& c : channel_cases()) CheckAgainstTheHost<double>(c, 1e-10);
}

TEST_F(DeviceConvolution, FloatChannelSplitsMatchTheHostLayer) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks to split channels";
  for (const Case& c : channel_cases()) CheckAgainstTheHost<float>(c, 1e-5);
}

TEST_F(DeviceConvolution, Bf16ChannelSplitsAreWithinTheirRounding) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks to split channels";
  for (const Case& c : channel_cases()) CheckAgainstTheHost<bf16>(c, 2e-2);
}

TEST_F(DeviceConvolution, Fp16ChannelSplitsAreWithinTheirRounding) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks to split channels";
  for (const Case& c : channel_cases()) CheckAgainstTheHost<fp16>(c, 4e-3);
}

// With the NCCL halo transport (one GPU per rank) the gradients are summed
// by NCCL on a stream of their own, and the channel collectives run over
// NCCL on the layer's stream; the passes still match the host layer, with
// channel splits of every scheme (communicators of the layer's own for
// each channel slice and channel group).
TEST_F(DeviceConvolution, NcclRunsTheGradientSumsAndChannelCollectives) {
  if (world_size() > DeviceSpace::device_count()) {
    GTEST_SKIP() << "NCCL needs one GPU per rank: " << world_size()
                 << " ranks, " << DeviceSpace::device_count() << " GPU(s)";
  }
  std::vector<Case> all = cases();
  for (const Case& c : channel_cases()) all.push_back(c);
  for (Case c : all) {
    c.options.halo.transport = HaloTransport::kNccl;
    CheckAgainstTheHost<float>(c, 1e-5);
  }
}

// The algorithm names in a layer's description ("cudnn NAME, ..."), in
// order.
std::string algorithms_of(const std::string& described) {
  std::string out;
  for (std::size_t at = described.find("cudnn "); at != std::string::npos;
       at = described.find("cudnn ", at + 1)) {
    const std::size_t end = described.find(',', at);
    out += described.substr(at, end - at) + ";";
  }
  return out;
}

// Rank 0's `s` on every rank.
std::string from_rank_0(std::string s) {
  long long n = static_cast<long long>(s.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  s.resize(static_cast<std::size_t>(n));
  MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  return s;
}

// cuDNN's timed search runs on each rank's own pieces; the layer then runs,
// for each problem, the fastest algorithm any rank chose for it. Split
// along samples, every rank has the same pieces, so every rank runs the
// same algorithms, and the results still match the host layer.
TEST_F(DeviceConvolution, TimedSearchesAgreeAcrossRanks) {
  Shape g = Shape::filled(4, 1);
  g[0] = world_size();
  Case c{{2 * world_size(), 8, 16, 12}, g,
         conv3(8, 8, 2, 1, 1, ConvBias::kAdd)};
  c.options.gpu.search = GpuAlgoSearch::kMeasured;
  ProcessGrid grid(MPI_COMM_WORLD, g);
  Convolution<float, DeviceSpace> dev(grid, c.desc,
                                      Distribution(c.global, g), c.options);
  const std::string mine = algorithms_of(dev.describe());
  EXPECT_FALSE(mine.empty()) << dev.describe();
  EXPECT_EQ(mine, from_rank_0(mine));
  CheckAgainstTheHost<float>(c, 1e-5);
}

// Layers given one cache share their timed searches: a second layer of
// the same shapes finds every problem there and runs the same algorithms
// without timing any; the results still match the host layer.
TEST_F(DeviceConvolution, LayersShareTheirTimedSearchesThroughACache) {
  Shape g = Shape::filled(4, 1);
  g[2] = world_size();
  Case c{{2, 8, 4 * world_size() + 3, 12},
         g,
         conv3(8, 8, 2, 1, 1, ConvBias::kAdd)};
  c.options.gpu.search = GpuAlgoSearch::kMeasured;
  c.options.gpu.cache = std::make_shared<GpuAlgoCache>();
  const GpuAlgoCache& cache = *c.options.gpu.cache;
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(c.global, g);
  Convolution<float, DeviceSpace> first(grid, c.desc, dist, c.options);
  EXPECT_EQ(cache.hits(), 0u);
  const std::size_t searched = cache.misses();
  EXPECT_GT(searched, 0u);
  EXPECT_GT(cache.size(), 0u);
  Convolution<float, DeviceSpace> second(grid, c.desc, dist, c.options);
  EXPECT_EQ(cache.misses(), searched) << "the second layer searched again";
  EXPECT_GT(cache.hits(), 0u);
  EXPECT_EQ(algorithms_of(second.describe()), algorithms_of(first.describe()));
  CheckAgainstTheHost<float>(c, 1e-5);
}

}  // namespace
}  // namespace distconv
