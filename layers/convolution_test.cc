// The distributed convolution against the reference kernels on the
// gathered global tensors, on every grid the rank count factors into
// (channels whole, and channel/filter parallelism with both schemes),
// overlap on and off; adjoint identities; bad input.
#include "layers/convolution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference/conv.h"
#include "tests/conv_check.h"
#include "tests/conv_run.h"
#include "tests/layer_testing.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::grids_without_channel_split;
using testing::spatial_grid;
using testing::world_size;

struct ConvCase {
  std::string name;
  ConvDesc desc;
  Shape src_shape;
};

ConvDesc conv2d(Index c, Index f, Shape k, Shape s, Shape d, Shape pl,
                Shape pu, ConvBias bias = ConvBias::kNone, Index groups = 1) {
  ConvDesc desc = ConvDesc::make(c, f, k);
  desc.stride = s;
  desc.dilation = d;
  desc.padding_lower = pl;
  desc.padding_upper = pu;
  desc.bias = bias;
  desc.groups = groups;
  return desc;
}

// `desc` with the given padding mode per spatial dimension.
ConvDesc with_modes(ConvDesc desc, std::vector<PaddingMode> modes) {
  desc.padding_mode = std::move(modes);
  return desc;
}

// The support matrix: every case runs on every grid.
std::vector<ConvCase> cases() {
  const ConvBias kB = ConvBias::kAdd;
  const PaddingMode kC = PaddingMode::kCircular, kZ = PaddingMode::kZeros;
  return {
      {"circular_same_groups2",
       with_modes(conv2d(4, 6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, kB, 2),
                  {kC, kC}),
       {2, 4, 9, 8}},
      {"circular_h_zeros_w_lopsided_stride_dilation",
       with_modes(conv2d(2, 3, {4, 3}, {2, 1}, {1, 2}, {2, 1}, {1, 3}, kB),
                  {kC, kZ}),
       {1, 2, 10, 9}},
      // Halos wider than a neighbour's shard; one rank wraps onto itself.
      {"circular_padding_as_wide_as_the_input",
       with_modes(conv2d(1, 2, {5, 3}, {1, 2}, {1, 1}, {3, 1}, {3, 2}),
                  {kC, kC}),
       {1, 1, 3, 5}},
      {"conv3d_circular_d_w",
       with_modes(conv2d(2, 2, {3, 2, 3}, {1, 1, 2}, {1, 1, 1}, {1, 0, 2},
                         {1, 1, 1}, kB),
                  {kC, kZ, kC}),
       {1, 2, 5, 6, 7}},
      {"stride2_same",
       conv2d(3, 4, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, kB),
       {2, 3, 11, 10}},
      {"odd_local_shapes_stride2_no_padding",
       conv2d(2, 3, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}), {1, 2, 13, 9}},
      {"windows_not_at_shard_edges_1x1_stride3",
       conv2d(2, 2, {1, 1}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, kB),
       {2, 2, 10, 11}},
      {"padding_smaller_than_same_5x5",
       conv2d(2, 3, {5, 5}, {1, 1}, {1, 1}, {1, 2}, {2, 1}), {1, 2, 12, 9}},
      {"even_kernel_with_bias",
       conv2d(3, 2, {2, 4}, {1, 1}, {1, 1}, {0, 1}, {1, 2}, kB),
       {2, 3, 9, 10}},
      {"dilation2", conv2d(2, 2, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}),
       {1, 2, 12, 12}},
      {"stem_7x7_stride2",
       conv2d(3, 4, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {2, 2}, kB),
       {1, 3, 20, 18}},
      {"groups2", conv2d(4, 6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, kB, 2),
       {2, 4, 9, 8}},
      {"padding_wider_than_kernel",
       conv2d(1, 2, {3, 3}, {2, 1}, {1, 1}, {4, 3}, {4, 2}, kB),
       {1, 1, 6, 5}},
      {"conv3d_lopsided_stride_dilation",
       conv2d(2, 3, {3, 1, 2}, {2, 1, 1}, {1, 2, 1}, {1, 0, 0}, {0, 1, 1}, kB),
       {1, 2, 7, 8, 6}},
      {"conv3d_same", conv2d(2, 2, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1},
                             {1, 1, 1}),
       {2, 2, 6, 5, 7}},
  };
}

// Runs the case on `grid`: forward, backward-weights, backward-data; the
// gathered results must match the reference.
template <typename T>
void ExpectMatchesReference(const ConvCase& c, const ProcessGrid& grid,
                            const ConvolutionOptions& options, double tol) {
  const ConvDesc& desc = c.desc;
  const Shape dst_shape = desc.dst_shape(c.src_shape);
  const auto x = random_vector<T>(c.src_shape.volume(), 1);
  const auto w = random_vector<T>(desc.weights_shape().volume(), 2);
  const auto b = random_vector<T>(desc.out_channels, 3);
  const auto dy = random_vector<T>(dst_shape.volume(), 4);
  const T* bias = desc.bias == ConvBias::kAdd ? b.data() : nullptr;

  ConvRun<T> run(grid, desc, c.src_shape, options);
  run.scatter_inputs(x.data(), dy.data());
  // Garbage in the outputs must not survive.
  run.y.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  run.dx.buffer().for_each([](const Shape&, T& v) { v = T(1e6); });
  std::vector<T> y_ref(dst_shape.volume()), dx_ref(c.src_shape.volume()),
      dw_ref(w.size()), db_ref(b.size());
  reference::conv_fwd(desc, c.src_shape, x.data(), w.data(), bias, dst_shape,
                      y_ref.data());
  reference::conv_bwd_data(desc, dst_shape, dy.data(), w.data(), c.src_shape,
                           dx_ref.data());
  reference::conv_bwd_weights(desc, c.src_shape, x.data(), dst_shape,
                              dy.data(), dw_ref.data(), db_ref.data());
  // Plans are reusable; the first run must not depend on halos a previous
  // run left behind.
  for (int repeat = 0; repeat < 2; ++repeat) {
    SCOPED_TRACE(repeat == 0 ? "first run" : "second run");
    std::vector<T> dw(w.size(), T(5)), db(b.size(), T(5));
    run.all_passes(w.data(), bias, dw.data(), db.data());
    std::vector<T> y(dst_shape.volume()), dx(c.src_shape.volume());
    run.gather_outputs(y.data(), dx.data());
    if (grid.rank() == 0) {
      EXPECT_LE(max_relative_error(y, y_ref), tol) << "forward";
      EXPECT_LE(max_relative_error(dx, dx_ref), tol) << "backward-data";
    }
    EXPECT_LE(max_relative_error(dw, dw_ref), tol) << "backward-weights";
    if (bias != nullptr) {
      EXPECT_LE(max_relative_error(db, db_ref), tol) << "bias gradient";
    }
  }
}


template <typename T>
void ForEveryCaseAndGrid(double tol) {
  for (const ConvCase& c : cases()) {
    for (const Shape& shape :
         grids_without_channel_split(c.src_shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      for (ConvOverlap overlap :
           {ConvOverlap::kInteriorFirst, ConvOverlap::kNone}) {
        SCOPED_TRACE(c.name + " on grid " + shape.to_string() +
                     (overlap == ConvOverlap::kNone ? ", no overlap" : ""));
        ConvolutionOptions options;
        options.overlap = overlap;
        ExpectMatchesReference<T>(c, grid, options, tol);
        if (testing::max_over(MPI_COMM_WORLD,
                              ::testing::Test::HasFailure()) != 0) {
          return;
        }
      }
    }
  }
}

// Whether the case's channel partition on `grid` cuts a group of a grouped
// convolution (the plan refuses those).
bool cuts_a_group(const ConvCase& c, const Shape& grid) {
  try {
    ConvGeometry(c.desc, c.src_shape)
        .channel_split(Distribution(c.src_shape, grid));
    return false;
  } catch (const Error&) {
    return true;
  }
}

constexpr ChannelParallelism kSchemes[] = {
    ChannelParallelism::kStationaryOutput, ChannelParallelism::kStationaryInput,
    ChannelParallelism::kStationaryWeights};

// Channel and filter parallelism: every case on every grid that splits
// channels (alone, with samples, with space), every scheme (stationary
// weights as the squarest Pc x Pf: 2x2 on 4 parts, 2x3 on 6, 2x4 on 8),
// overlap on and off. Grouped cases run locally where the parts hold whole
// groups, and are refused on every rank where a part cuts a group: the support
// matrix.
template <typename T>
void ForEveryCaseOnChannelGrids(double tol) {
  for (const ConvCase& c : cases()) {
    for (const Shape& shape :
         testing::grids_with_channel_split(c.src_shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      for (ChannelParallelism scheme : kSchemes) {
        for (ConvOverlap overlap :
             {ConvOverlap::kInteriorFirst, ConvOverlap::kNone}) {
          SCOPED_TRACE(c.name + " on grid " + shape.to_string() + ", " +
                       to_string(scheme) +
                       (overlap == ConvOverlap::kNone ? ", no overlap" : ""));
          ConvolutionOptions options;
          options.overlap = overlap;
          options.channels = scheme;
          if (cuts_a_group(c, shape)) {
            testing::expect_error_on_all_ranks(
                MPI_COMM_WORLD, ErrorKind::kUnsupported, "cut a group",
                [&] { ConvRun<T>(grid, c.desc, c.src_shape, options); });
          } else {
            ExpectMatchesReference<T>(c, grid, options, tol);
          }
          if (testing::max_over(MPI_COMM_WORLD,
                                ::testing::Test::HasFailure()) != 0) {
            return;
          }
        }
      }
    }
  }
}

TEST(Convolution, DoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<double>(1e-12);
}

TEST(Convolution, FloatMatchesTheReferenceOnEveryGrid) {
  ForEveryCaseAndGrid<float>(2e-5);
}

// The input and output gradient read in place, with frames for the
// edges: the same results (grouped cases on channel grids whose parts hold
// whole groups run in place too; other channel splits plan buffers).
TEST(Convolution, InPlaceInputMatchesTheReferenceOnEveryGrid) {
  for (const ConvCase& c : cases()) {
    std::vector<Shape> grids = grids_without_channel_split(c.src_shape.ndims());
    for (const Shape& g : testing::grids_with_channel_split(c.src_shape.ndims()))
      grids.push_back(g);
    for (const Shape& shape : grids) {
      if (cuts_a_group(c, shape)) continue;
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      SCOPED_TRACE(c.name + " on grid " + shape.to_string() + ", in place");
      ConvolutionOptions options;
      options.input = ConvInput::kInPlace;
      ExpectMatchesReference<double>(c, grid, options, 1e-12);
      if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure())) {
        return;
      }
    }
  }
}

// fp32 in place (oneDNN's kernels planned on the shards' strides), and
// in place without overlap (every piece after the exchange, the frames
// the whole windows), on the grid splitting every spatial dimension.
TEST(Convolution, InPlaceInputFloatAndWithoutOverlap) {
  for (const ConvCase& c : cases()) {
    const Shape shape = spatial_grid(c.src_shape.ndims());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    SCOPED_TRACE(c.name + " on grid " + shape.to_string());
    ConvolutionOptions options;
    options.input = ConvInput::kInPlace;
    ExpectMatchesReference<float>(c, grid, options, 2e-5);
    options.overlap = ConvOverlap::kNone;
    ExpectMatchesReference<double>(c, grid, options, 1e-12);
  }
}

TEST(Convolution, DoubleChannelParallelismMatchesTheReference) {
  ForEveryCaseOnChannelGrids<double>(1e-12);
}

TEST(Convolution, FloatChannelParallelismMatchesTheReference) {
  ForEveryCaseOnChannelGrids<float>(2e-5);
}

// bf16: the cells rounded once from an fp32 result (twice or so where
// partial sums are summed or folded), so each within a few bf16 roundings
// (2^-8 relative) of the result's magnitude: the same pass on |x|, |w|.
// The reference passes in double on `x`, `w`, `b` and `dy`.
struct ReferencePasses {
  std::vector<double> y, dx, dw, db;
  ReferencePasses(const ConvDesc& desc, const Shape& src_shape,
                  const std::vector<double>& x, const std::vector<double>& w,
                  const std::vector<double>& b, const std::vector<double>& dy)
      : y(desc.dst_shape(src_shape).volume()),
        dx(src_shape.volume()),
        dw(w.size()),
        db(b.size()) {
    const Shape dst_shape = desc.dst_shape(src_shape);
    const double* bias = desc.bias == ConvBias::kAdd ? b.data() : nullptr;
    reference::conv_fwd(desc, src_shape, x.data(), w.data(), bias, dst_shape,
                        y.data());
    reference::conv_bwd_data(desc, dst_shape, dy.data(), w.data(), src_shape,
                             dx.data());
    reference::conv_bwd_weights(desc, src_shape, x.data(), dst_shape,
                                dy.data(), dw.data(), db.data());
  }
};

// Tensors of N (bf16 or fp16) with fp32 weights against the double
// reference on the same (N-exact) data: y and dx within 4 roundings of N
// of their magnitude, the fp32 weight gradients as the fp32 layer's.
template <typename N>
void ExpectNarrowMatchesReference(const ConvCase& c, const ProcessGrid& grid,
                                  const ConvolutionOptions& options) {
  const ConvDesc& desc = c.desc;
  const Shape dst_shape = desc.dst_shape(c.src_shape);
  const auto x = random_vector<N>(c.src_shape.volume(), 1);
  const auto w = random_vector<float>(desc.weights_shape().volume(), 2);
  const auto b = random_vector<float>(desc.out_channels, 3);
  const auto dy = random_vector<N>(dst_shape.volume(), 4);
  const auto wide = [](const auto& v) {
    return std::vector<double>(v.begin(), v.end());
  };
  const ReferencePasses ref(desc, c.src_shape, wide(x), wide(w), wide(b),
                            wide(dy));
  const ReferencePasses mag(desc, c.src_shape, absolute(wide(x)),
                            absolute(wide(w)), absolute(wide(b)),
                            absolute(wide(dy)));
  const float* bias = desc.bias == ConvBias::kAdd ? b.data() : nullptr;
  ConvRun<N> run(grid, desc, c.src_shape, options);
  run.scatter_inputs(x.data(), dy.data());
  run.y.buffer().for_each([](const Shape&, N& v) { v = 1e6f; });
  run.dx.buffer().for_each([](const Shape&, N& v) { v = 1e6f; });
  std::vector<float> dw(w.size(), 5.0f), db(b.size(), 5.0f);
  run.all_passes(w.data(), bias, dw.data(), db.data());
  std::vector<N> y(dst_shape.volume()), dx(c.src_shape.volume());
  run.gather_outputs(y.data(), dx.data());
  if (grid.rank() == 0) {
    EXPECT_EQ(cells_outside(y, ref.y, mag.y, 4 * kRounding<N>), 0) << "forward";
    EXPECT_EQ(cells_outside(dx, ref.dx, mag.dx, 4 * kRounding<N>), 0)
        << "backward-data";
  }
  EXPECT_LE(max_relative_error(wide(dw), ref.dw), 2e-5) << "backward-weights";
  if (bias != nullptr) {
    EXPECT_LE(max_relative_error(wide(db), ref.db), 2e-5) << "bias gradient";
  }
}

// Every case on every grid, channel splits (each scheme) included.
TEST(Convolution, Bf16MatchesTheReferenceOnEveryGrid) {
  for (const ConvCase& c : cases()) {
    std::vector<Shape> grids = grids_without_channel_split(c.src_shape.ndims());
    for (const Shape& g : testing::grids_with_channel_split(c.src_shape.ndims()))
      grids.push_back(g);
    for (const Shape& shape : grids) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      for (ChannelParallelism scheme : kSchemes) {
        SCOPED_TRACE(c.name + " on grid " + shape.to_string() + ", " +
                     to_string(scheme));
        ConvolutionOptions options;
        options.channels = scheme;
        if (cuts_a_group(c, shape)) break;
        ExpectNarrowMatchesReference<bf16>(c, grid, options);
        if (testing::max_over(MPI_COMM_WORLD,
                              ::testing::Test::HasFailure()) != 0) {
          return;
        }
        if (shape[1] == 1) break;  // the scheme matters on channel splits
      }
    }
  }
}

// fp16 on every case and grid with the default scheme: the same staging
// and collectives as bf16 (summed in fp32), with fp16's rounding.
TEST(Convolution, Fp16MatchesTheReferenceOnEveryGrid) {
  for (const ConvCase& c : cases()) {
    std::vector<Shape> grids = grids_without_channel_split(c.src_shape.ndims());
    for (const Shape& g :
         testing::grids_with_channel_split(c.src_shape.ndims()))
      grids.push_back(g);
    for (const Shape& shape : grids) {
      SCOPED_TRACE(c.name + " on grid " + shape.to_string());
      if (cuts_a_group(c, shape)) continue;
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      ExpectNarrowMatchesReference<fp16>(c, grid, ConvolutionOptions{});
      if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure())) {
        return;
      }
    }
  }
}

// Each scheme's weight block: stationary output holds its own filters and
// every channel, stationary input every filter and its own channels; the
// bias block is the own filters either way.
TEST(Convolution, WeightBlocksFollowTheScheme) {
  const int n = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, n, 1, 1});
  const ConvDesc desc = ConvDesc::make(2 * n + 1, 3 * n, {3, 3});
  const Distribution src(Shape{2, 2 * n + 1, 6, 5}, grid.shape());
  const Index me = grid.coord()[1];
  const BlockPartition c = BlockPartition::balanced(2 * n + 1, n);
  const BlockPartition f = BlockPartition::balanced(3 * n, n);
  ConvolutionOptions options;
  options.channels = ChannelParallelism::kStationaryOutput;
  const Convolution<float> out(grid, desc, src, options);
  EXPECT_EQ(out.weights_block(), (Box{Shape{f.begin(me), 0, 0, 0},
                                      Shape{f.size(me), 2 * n + 1, 3, 3}}));
  EXPECT_EQ(out.bias_block(), (Box{Shape{f.begin(me)}, Shape{f.size(me)}}));
  options.channels = ChannelParallelism::kStationaryInput;
  const Convolution<float> in(grid, desc, src, options);
  EXPECT_EQ(in.weights_block(),
            (Box{Shape{0, c.begin(me), 0, 0}, Shape{3 * n, c.size(me), 3, 3}}));
  EXPECT_EQ(in.bias_block(), (Box{Shape{f.begin(me)}, Shape{f.size(me)}}));
  // The output's filters are balanced over the channel parts.
  EXPECT_EQ(out.dst_layout().distribution().partition(1), f);
  if (n % 2 != 0) return;
  // Stationary weights as 2 x n/2: member (i, j) = me as i * n/2 + j holds
  // filter block j (of n/2) by channel block i (the parts of its row), and
  // owns piece i (of 2) of filter block j.
  options.channels = ChannelParallelism::kStationaryWeights;
  options.channel_blocks = 2;
  const Convolution<float> w2(grid, desc, src, options);
  const Index pf = n / 2, i = me / pf, j = me % pf;
  const BlockPartition fb = BlockPartition::balanced(3 * n, pf);
  const Index c0 = c.begin(i * pf), c1 = c.begin(i * pf + pf - 1) +
                                         c.size(i * pf + pf - 1);
  EXPECT_EQ(w2.weights_block(), (Box{Shape{fb.begin(j), c0, 0, 0},
                                     Shape{fb.size(j), c1 - c0, 3, 3}}));
  const BlockPartition& owned = w2.dst_layout().distribution().partition(1);
  const BlockPartition pieces = BlockPartition::balanced(fb.size(j), 2);
  const Index owner = j * 2 + i;
  EXPECT_EQ(owned.begin(owner), fb.begin(j) + pieces.begin(i));
  EXPECT_EQ(owned.size(owner), pieces.size(i));
  EXPECT_EQ(w2.bias_block(),
            (Box{Shape{owned.begin(me)}, Shape{owned.size(me)}}));
}

// Many small partitions: a 10x10 image over the squarest spatial grid of
// all ranks (4x4 with 16 ranks).
TEST(Convolution, ManySmallPartitions) {
  ProcessGrid grid(MPI_COMM_WORLD, testing::squarest_hw_grid());
  for (const ConvCase& c : cases()) {
    if (c.src_shape.ndims() != 4) continue;
    ConvCase small = c;
    small.src_shape[2] = small.src_shape[3] = 10;
    try {
      small.desc.validate(small.src_shape);
    } catch (const Error&) {
      continue;
    }
    SCOPED_TRACE(c.name + " 10x10 on grid " + grid.shape().to_string());
    ExpectMatchesReference<double>(small, grid, {}, 1e-12);
    ExpectMatchesReference<float>(small, grid, {}, 2e-5);
  }
}

TEST(Convolution, OverlapWithHalosWrittenInFlight) {
  // MPI datatypes receive into the tensor while in flight: only the true
  // interior may run early.
  const ConvCase c = cases()[0];
  for (const Shape& shape : grids_without_channel_split(4)) {
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    ConvolutionOptions options;
    options.halo.transport = HaloTransport::kMpiDatatypes;
    SCOPED_TRACE(shape.to_string());
    ExpectMatchesReference<double>(c, grid, options, 1e-12);
  }
}

// <conv(x), dy> == <x, conv_bwd_data(dy)> and
// <conv_w(x), dy> == <w, conv_bwd_weights(x, dy)>, distributed, in double.
// On a spatial grid, and on a grid splitting channels (and space where
// the rank count allows) with each scheme.
TEST(Convolution, BackwardPassesAreTheAdjointsOfForward) {
  struct Setting {
    bool channels;
    ChannelParallelism scheme;
  };
  const Setting settings[] = {
      {false, ChannelParallelism::kStationaryOutput},
      {true, ChannelParallelism::kStationaryOutput},
      {true, ChannelParallelism::kStationaryInput},
      {true, ChannelParallelism::kStationaryWeights}};
  for (const ConvCase& base : cases()) {
    for (const Setting& setting : settings) {
    ConvCase c = base;
    c.desc.bias = ConvBias::kNone;  // linear maps
    const Shape dst_shape = c.desc.dst_shape(c.src_shape);
    const int nd = c.src_shape.ndims();
    const Shape shape =
        setting.channels ? testing::channel_grid(nd) : spatial_grid(nd);
    if (setting.channels && cuts_a_group(c, shape)) continue;
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    SCOPED_TRACE(c.name + " on grid " + grid.shape().to_string() +
                 (setting.channels
                      ? std::string(", ") + to_string(setting.scheme)
                      : std::string()));
    const auto x = random_vector<double>(c.src_shape.volume(), 5);
    const auto w = random_vector<double>(c.desc.weights_shape().volume(), 6);
    const auto dy = random_vector<double>(dst_shape.volume(), 7);
    ConvolutionOptions options;
    options.channels = setting.scheme;
    ConvRun<double> run(grid, c.desc, c.src_shape, options);
    run.scatter_inputs(x.data(), dy.data());
    std::vector<double> dw(w.size());
    run.all_passes(w.data(), nullptr, dw.data(), nullptr);
    const double ax_y =
        testing::global_dot(run.y, run.dy);
    const double x_aty =
        testing::global_dot(run.x, run.dx);
    EXPECT_NEAR(ax_y, x_aty, 1e-12 * std::max(1.0, std::abs(ax_y)));
    double w_dw = 0;
    for (size_t i = 0; i < w.size(); ++i) w_dw += w[i] * dw[i];
    EXPECT_NEAR(ax_y, w_dw, 1e-12 * std::max(1.0, std::abs(ax_y)));
    }
  }
}

TEST(Convolution, BadInputFailsOnEveryRank) {
  const int n = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  ConvDesc desc = ConvDesc::make(4, 4, {3, 3});
  const MPI_Comm comm = MPI_COMM_WORLD;
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "has 3 channels", [&] {
        Convolution<float>(grid, desc,
                           Distribution(Shape{1, 3, 8 * n, 8}, grid.shape()));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "spans", [&] {
        Convolution<float>(grid, ConvDesc::make(4, 4, {9, 3}),
                           Distribution(Shape{1, 4, 4, 8}, grid.shape()));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Convolution<float>(
            grid, desc, Distribution(Shape{1, 4, 8, 8}, Shape{1, 1, 1, n + 1}));
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "must be >= 0", [&] {
        Convolution<float>(grid, desc,
                           Distribution(Shape{-1, 4, 8, 8}, grid.shape()));
      });
  if (n > 1) {
    // A grouped convolution (2 groups of 2 channels) whose channel parts
    // {1, 3, 0, ...} cut the first group.
    ProcessGrid channels(MPI_COMM_WORLD, Shape{1, n, 1, 1});
    ConvDesc grouped = ConvDesc::make(4, 4, {3, 3});
    grouped.groups = 2;
    std::vector<Index> sizes(n, 0);
    sizes[0] = 1;
    sizes[1] = 3;
    const Distribution cut({BlockPartition::balanced(1, 1),
                            BlockPartition::from_sizes(sizes),
                            BlockPartition::balanced(8, 1),
                            BlockPartition::balanced(8, 1)});
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kUnsupported, "channel parts {1, 3", [&] {
          Convolution<float>(channels, grouped, cut);
        });
    // Stationary output: backward_weights reads what forward() gathered.
    Convolution<double> split(
        channels, desc, Distribution(Shape{1, 4, 8, 8}, channels.shape()));
    DistTensor<double> sx(channels, split.src_layout()),
        sdy(channels, split.diff_dst_layout());
    std::vector<double> dw(split.weights_block().extent.volume());
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kState, "call forward() on this src first",
        [&] { split.backward_weights(sx, sdy, dw.data(), nullptr); });
    // Stationary weights whose channel blocks do not divide the parts.
    ConvolutionOptions blocks;
    blocks.channels = ChannelParallelism::kStationaryWeights;
    blocks.channel_blocks = n + 1;
    testing::expect_error_on_all_ranks(
        comm, ErrorKind::kInvalidArgument, "does not divide the grid's", [&] {
          Convolution<float>(channels, desc,
                             Distribution(Shape{1, 4, 8, 8}, channels.shape()),
                             blocks);
        });
  }
  // A tensor of another layout: the plan is untouched and works after.
  Convolution<double> conv(grid, desc,
                           Distribution(Shape{1, 4, 8 * n, 8}, grid.shape()));
  DistTensor<double> x(grid, conv.src_layout()), y(grid, conv.dst_layout());
  const auto w = random_vector<double>(desc.weights_shape().volume(), 1);
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "dst tensor's layout",
      [&] { conv.forward(x, w.data(), nullptr, x); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "weights are null",
      [&] { conv.forward(x, nullptr, nullptr, y); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kState, "no backward_weights in flight",
      [&] { conv.wait_gradients(); });
  conv.forward(x, w.data(), nullptr, y);  // still usable
}

}  // namespace
}  // namespace distconv
