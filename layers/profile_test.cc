// The profile: records summed per (layer, pass), merged over ranks as the
// slowest rank sees them (times and waits the most any rank had, work
// summed); the work read from layers' plans adds up over the ranks to
// the global problem's; bad use throws.
#include "layers/profile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/process_grid.h"
#include "layers/batch_norm.h"
#include "layers/convolution.h"
#include "layers/loss.h"
#include "layers/pooling.h"
#include "layers/profile_work.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::world_rank;
using testing::world_size;

TEST(Profile, MergesRanksAsTheSlowestSeesThem) {
  const int r = world_rank(), p = world_size();
  Profile profile;
  for (int step = 0; step < 2; ++step) {
    profile.begin_step();
    profile.add("conv", ProfilePass::kForward, 1.0 + r, {10.0 * (r + 1), 4},
                LayerStats{0.5 * r, 0.25, 0});
    profile.add("conv", ProfilePass::kBackwardData, 2.0, {1, 1});
    if (r == p - 1) profile.add("last only", ProfilePass::kOther, 3.0, {});
    profile.end_step();
  }
  ASSERT_EQ(profile.records().size(), r == p - 1 ? 3u : 2u);
  EXPECT_EQ(profile.records()[0].calls, 2);
  const ProfileSummary sum = profile.summarize(MPI_COMM_WORLD);
  EXPECT_EQ(sum.ranks, p);
  EXPECT_EQ(sum.steps, 2);
  ASSERT_EQ(sum.rows.size(), 3u);
  const ProfileRow& fwd = sum.rows[0];
  EXPECT_EQ(fwd.layer, "conv");
  EXPECT_EQ(fwd.pass, ProfilePass::kForward);
  EXPECT_EQ(fwd.calls, 2);
  EXPECT_DOUBLE_EQ(fwd.seconds, 2.0 * p);  // the slowest: rank p-1, 2 calls
  EXPECT_DOUBLE_EQ(fwd.flops, 2 * 10.0 * p * (p + 1) / 2);  // all ranks
  EXPECT_DOUBLE_EQ(fwd.bytes, 2 * 4.0 * p);
  EXPECT_DOUBLE_EQ(fwd.halo_wait_s, 2 * 0.5 * (p - 1));
  EXPECT_DOUBLE_EQ(fwd.collective_wait_s, 2 * 0.25);
  EXPECT_EQ(sum.rows[1].pass, ProfilePass::kBackwardData);
  EXPECT_EQ(sum.rows[2].layer, "last only");
  EXPECT_DOUBLE_EQ(sum.rows[2].seconds, 6.0);
  const std::string table = sum.table();
  EXPECT_NE(table.find("backward-data"), std::string::npos) << table;
  EXPECT_NE(table.find("last only"), std::string::npos) << table;
  const std::string json = sum.json();
  EXPECT_NE(json.find("\"layer\": \"last only\", \"pass\": \"other\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"steps\": 2"), std::string::npos) << json;
}

TEST(Profile, LayersWorkSumsToTheGlobalProblem) {
  const int p = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, p, 1});
  const Index n = 2, c = 3, f = 4, h = 5 * p + 1, w = 6;  // uneven split
  ConvDesc desc = ConvDesc::make(c, f, {3, 3});
  desc.padding_lower = desc.padding_upper = {1, 1};
  Convolution<float> conv(grid, desc,
                          Distribution(Shape{n, c, h, w}, grid.shape()));
  DistTensor<float> x(grid, conv.src_layout()), y(grid, conv.dst_layout());
  std::vector<float> weights(desc.weights_shape().volume(), 0.5f);
  Profile profile;
  profiled(&profile, "conv", ProfilePass::kForward, conv,
           [&] { conv.forward(x, weights.data(), nullptr, y); });
  DistTensor<float> dy(grid, conv.diff_dst_layout());
  std::vector<float> dw(weights.size());
  profiled(&profile, "conv", ProfilePass::kBackwardWeights, conv,
           [&] { conv.backward_weights(x, dy, dw.data(), nullptr); });
  profiled_wait(&profile, "conv", conv, [&] { conv.wait_gradients(); });
  PoolDesc pd = PoolDesc::make(PoolKind::kMax, {2, 2});
  Pooling<float> pool(grid, pd, Distribution(Shape{n, c, h, w}, grid.shape()));
  DistTensor<float> px(grid, pool.src_layout()), py(grid, pool.dst_layout());
  profiled(&profile, "pool", ProfilePass::kForward, pool,
           [&] { pool.forward(px, py); });
  bool ran = false;
  profiled(nullptr, "pool", ProfilePass::kForward, pool, [&] { ran = true; });
  EXPECT_TRUE(ran);  // bare, unrecorded
  const ProfileSummary sum = profile.summarize(MPI_COMM_WORLD);
  ASSERT_EQ(sum.rows.size(), 3u);
  const double conv_flops = 2.0 * n * f * h * w * c * 9;
  EXPECT_DOUBLE_EQ(sum.rows[0].flops, conv_flops);
  EXPECT_EQ(sum.rows[1].pass, ProfilePass::kBackwardWeights);
  EXPECT_EQ(sum.rows[1].calls, 2);  // backward_weights, wait_gradients
  EXPECT_DOUBLE_EQ(sum.rows[1].flops, conv_flops);  // counted once
  EXPECT_GE(sum.rows[1].collective_wait_s, 0);
  EXPECT_DOUBLE_EQ(sum.rows[2].flops, double(n * c * (h / 2) * (w / 2) * 4));
  EXPECT_EQ(sum.rows[2].calls, 1);
  EXPECT_GE(sum.rows[0].halo_wait_s, 0);
  EXPECT_GT(sum.rows[0].bytes, 4.0 * n * c * h * w);
}

// Batch norm's and the loss's allreduces show as collective waits (batch
// norm on a rank alone makes none), and reset_stats() clears them.
TEST(Profile, StatisticsAllreducesAreCollectiveWaits) {
  const int p = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, p, 1});
  const Distribution dist(Shape{2, 3, 4 * p, 5}, grid.shape());
  BatchNorm<float> bn(grid, dist);
  DistTensor<float> x(grid, bn.src_layout()), y(grid, bn.dst_layout());
  const std::vector<float> scale(3, 1.0f), shift(3, 0.0f);
  Loss<float> loss(grid, LossDesc::make(LossKind::kMeanSquaredError), dist);
  DistTensor<float> t(grid, loss.target_layout());
  Profile profile;
  profiled(&profile, "bn", ProfilePass::kForward, bn,
           [&] { bn.forward(x, scale.data(), shift.data(), y); });
  profiled(&profile, "loss", ProfilePass::kForward, loss,
           [&] { loss.forward(y, t); });
  const ProfileSummary sum = profile.summarize(MPI_COMM_WORLD);
  ASSERT_EQ(sum.rows.size(), 2u);
  for (const ProfileRow& r : sum.rows) {
    if (p > 1) {
      EXPECT_GT(r.collective_wait_s, 0) << r.layer;
    } else if (r.layer == "bn") {
      EXPECT_EQ(r.collective_wait_s, 0);  // its statistics set: this rank
    }
    EXPECT_LE(r.collective_wait_s, r.seconds) << r.layer;
  }
  bn.reset_stats();
  loss.reset_stats();
  EXPECT_EQ(bn.stats().allreduce_wait_s, 0);
  EXPECT_EQ(loss.stats().allreduce_wait_s, 0);
}

TEST(Profile, BadUseThrows) {
  Profile profile;
  testing::expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                                     "without begin_step",
                                     [&] { profile.end_step(); });
  profile.begin_step();
  testing::expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                                     "inside a step",
                                     [&] { profile.begin_step(); });
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "layer name",
      [&] { profile.add("a\tb", ProfilePass::kForward, 1, {}); });
  profile.end_step();
  EXPECT_EQ(profile.steps(), 1);
}

}  // namespace
}  // namespace distconv
