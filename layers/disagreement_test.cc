// Ranks that describe a layer differently (what a framework does when it
// derives a shape from a rank-local value) get the same clear
// distconv::Error on every rank when the layer is built: the first field
// that differs and two ranks that disagree. Nothing hangs, nothing
// crashes. The last rank is the odd one out; rank 0 is named first.
#include <gtest/gtest.h>

#include <string>

#include "distconv/conv_desc.h"
#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/pool_desc.h"
#include "distconv/process_grid.h"
#include "halo/halo_exchange.h"
#include "layers/batch_norm.h"
#include "layers/convolution.h"
#include "layers/deconvolution.h"
#include "layers/pooling.h"
#include "layers/redistribute.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

bool odd_one() { return world_rank() == world_size() - 1; }
// "... on rank 0, <theirs> on rank <last>"
std::string says(const std::string& object, const std::string& field,
                 const std::string& ours, const std::string& theirs) {
  return "ranks disagree on the " + object + ": " + field + " " + ours +
         " on rank 0, " + theirs + " on rank " +
         std::to_string(world_size() - 1);
}

class Disagreement : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  }
  ProcessGrid grid_{MPI_COMM_WORLD, Shape{1, 1, world_size(), 1}};
  Distribution src_{Shape{1, 4, 8 * world_size(), 12}, grid_.shape()};

  ConvDesc conv() const {
    ConvDesc d = ConvDesc::make(4, 4, {3, 3});
    d.padding_lower = d.padding_upper = {1, 1};
    return d;
  }
  void expect_conv(const ConvDesc& mine, const std::string& message,
                   const Distribution* src = nullptr,
                   const ConvolutionOptions& options = {}) {
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kGridMismatch, message,
        [&] { Convolution<float> c(grid_, mine, src ? *src : src_, options); });
  }
};

TEST_F(Disagreement, ConvolutionKernel) {
  ConvDesc d = conv();
  if (odd_one()) {
    d.kernel = {5, 5};
    d.padding_lower = d.padding_upper = {2, 2};
  }
  expect_conv(d, says("convolution", "kernel", "3x3", "5x5"));
}

TEST_F(Disagreement, ConvolutionStride) {
  ConvDesc d = conv();
  if (odd_one()) d.stride = {2, 2};
  expect_conv(d, says("convolution", "stride", "1x1", "2x2"));
}

TEST_F(Disagreement, ConvolutionPadding) {
  ConvDesc d = conv();
  if (odd_one()) d.padding_upper = {0, 1};
  expect_conv(d, says("convolution", "upper padding", "1x1", "0x1"));
}

TEST_F(Disagreement, ConvolutionPaddingMode) {
  ConvDesc d = conv();
  if (odd_one()) {
    d.padding_mode = {PaddingMode::kCircular, PaddingMode::kZeros};
  }
  expect_conv(d, says("convolution", "padding mode", "zeros, zeros",
                      "circular, zeros"));
}

TEST_F(Disagreement, ConvolutionBiasAndChannels) {
  ConvDesc bias = conv(), channels = conv();
  if (odd_one()) {
    bias.bias = ConvBias::kAdd;
    channels.out_channels = 8;
  }
  expect_conv(bias, says("convolution", "bias", "no", "yes"));
  expect_conv(channels, says("convolution", "output channels", "4", "8"));
}

TEST_F(Disagreement, ConvolutionGlobalShape) {
  const Distribution taller(Shape{1, 4, 8 * world_size() + 8, 12},
                            grid_.shape());
  const std::string ours = src_.global_shape().to_string();
  expect_conv(conv(),
              says("convolution", "input shape", ours,
                   taller.global_shape().to_string()),
              odd_one() ? &taller : &src_);
}

// The same global shape split differently: ranks 0 and 1 trade rows.
TEST_F(Disagreement, ConvolutionSplit) {
  std::vector<Index> sizes(world_size(), 8);
  std::vector<Index> other = sizes;
  other[0] = 10;
  other[1] = 6;
  auto dist = [&](const std::vector<Index>& rows) {
    return Distribution(
        {BlockPartition::balanced(1, 1), BlockPartition::balanced(4, 1),
         BlockPartition::from_sizes(rows), BlockPartition::balanced(12, 1)});
  };
  const Distribution even = dist(sizes), uneven = dist(other);
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "ranks disagree on the convolution: input split "
      "dimension 2: 8/8",
      [&] { Convolution<float> c(grid_, conv(), odd_one() ? uneven : even); });
}

TEST_F(Disagreement, ConvolutionOptions) {
  ConvolutionOptions options;
  if (odd_one()) options.overlap = ConvOverlap::kNone;
  expect_conv(conv(), says("convolution", "overlap", "interior first", "none"),
              nullptr, options);
}

TEST_F(Disagreement, ConvolutionChannelScheme) {
  if (world_size() != 2) GTEST_SKIP() << "for 2 ranks";
  const ProcessGrid channels(MPI_COMM_WORLD, Shape{1, 2, 1, 1});
  const Distribution src(Shape{1, 4, 8, 8}, channels.shape());
  ConvolutionOptions options;
  if (odd_one()) options.channels = ChannelParallelism::kStationaryInput;
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      says("convolution", "channel scheme", "stationary_output over 1x2",
           "stationary_input over 2x1"),
      [&] { Convolution<float> c(channels, conv(), src, options); });
}

TEST_F(Disagreement, ElementType) {
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      says("convolution", "element type", "float32", "float64"), [&] {
        if (odd_one()) {
          Convolution<double> c(grid_, conv(), src_);
        } else {
          Convolution<float> c(grid_, conv(), src_);
        }
      });
}

TEST_F(Disagreement, DifferentLayers) {
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "ranks disagree on the object they build: convolution on rank 0, "
      "pooling on rank " +
          std::to_string(world_size() - 1),
      [&] {
        if (odd_one()) {
          Pooling<float> p(grid_, PoolDesc::make(PoolKind::kMax, {2, 2}), src_);
        } else {
          Convolution<float> c(grid_, conv(), src_);
        }
      });
}

TEST_F(Disagreement, Pooling) {
  PoolDesc kernel = PoolDesc::make(PoolKind::kMax, {3, 3});
  kernel.stride = {2, 2};
  kernel.padding_lower = kernel.padding_upper = {1, 1};
  PoolDesc kind = kernel, mode = kernel;
  if (odd_one()) {
    kernel = PoolDesc::make(PoolKind::kMax, {2, 2});
    kind.kind = PoolKind::kAverageExcludePadding;
    mode.padding_mode = {PaddingMode::kZeros, PaddingMode::kCircular};
  }
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            says("pooling", "kernel", "3x3", "2x2"),
                            [&] { Pooling<float> p(grid_, kernel, src_); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "ranks disagree on the "
                            "pooling: kind max on rank 0",
                            [&] { Pooling<float> p(grid_, kind, src_); });
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      says("pooling", "padding mode", "zeros, zeros", "zeros, circular"),
      [&] { Pooling<float> p(grid_, mode, src_); });
}

TEST_F(Disagreement, TransposedConvolution) {
  DeconvDesc d = DeconvDesc::make(4, 2, {2, 2});
  d.stride = {2, 2};
  DeconvDesc mode = d;
  if (odd_one()) {
    d.out_channels = 3;
    mode.padding_mode = {PaddingMode::kCircular, PaddingMode::kCircular};
  }
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      says("transposed convolution", "output channels", "2", "3"),
      [&] { Deconvolution<float> c(grid_, d, src_); });
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      says("transposed convolution", "padding mode", "zeros, zeros",
           "circular, circular"),
      [&] { Deconvolution<float> c(grid_, mode, src_); });
}

TEST_F(Disagreement, BatchNorm) {
  BatchNormOptions stats, mode, eps;
  const Distribution wider(Shape{1, 6, 8 * world_size(), 12}, grid_.shape());
  if (odd_one()) {
    stats.stats = BatchNormStats::kShard;
    mode.mode = BatchNormMode::kInference;
    eps.epsilon = 1e-3;
  }
  auto expect = [&](const BatchNormOptions& o, const Distribution& src,
                    const std::string& message) {
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch, message,
                              [&] { BatchNorm<float> b(grid_, src, o); });
  };
  expect(stats, src_,
         says("batch normalisation", "statistics", "global", "shard"));
  expect(mode, src_,
         says("batch normalisation", "mode", "training", "inference"));
  expect(eps, src_,
         says("batch normalisation", "epsilon", "1.0000000000000001e-05",
              "0.001"));
  expect(
      {}, odd_one() ? wider : src_,
      says("batch normalisation", "input shape",
           src_.global_shape().to_string(), wider.global_shape().to_string()));
}

TEST_F(Disagreement, Redistribution) {
  const ProcessGrid samples(MPI_COMM_WORLD, Shape{world_size(), 1, 1, 1});
  const HaloLayout from(src_);
  const HaloLayout to(Distribution(src_.global_shape(), samples.shape()));
  const HaloLayout last = to.with_storage(StorageOrder::kChannelsLast);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            says("redistribution", "destination storage order",
                                 "channels-first", "channels-last"),
                            [&] {
                              Redistribution<float> r(grid_, from, samples,
                                                      odd_one() ? last : to);
                            });
}

TEST_F(Disagreement, HaloExchange) {
  const HaloLayout one(src_, HaloWidths::symmetric({0, 0, 1, 1}));
  const HaloLayout two(src_, HaloWidths::symmetric({0, 0, 2, 1}));
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "ranks disagree on the halo exchange: layout halo widths",
      [&] { HaloExchange<float> h(grid_, odd_one() ? two : one); });
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      says("halo exchange", "element size", "4 bytes", "8 bytes"), [&] {
        if (odd_one()) {
          HaloExchange<double> h(grid_, one);
        } else {
          HaloExchange<float> h(grid_, one);
        }
      });
}

// After all of that, the layers still build and agree.
TEST_F(Disagreement, AgreeingRanksStillBuild) {
  EXPECT_NO_THROW(Convolution<float>(grid_, conv(), src_));
  EXPECT_NO_THROW(BatchNorm<float>(grid_, src_));
}

}  // namespace
}  // namespace distconv
