#include "perf/model/machine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "distconv/error.h"

namespace distconv {
namespace model {
namespace {

const char* kText =
    "# a machine\n"
    "name = two nodes\n"
    "ranks_per_node = 4   # four GPUs\n"
    "cores_per_node = 0\ncontention = 1.5\n"
    "intra_latency_us = 2\nintra_bandwidth_GBps = 100\n"
    "inter_latency_us = 5\ninter_bandwidth_GBps = 25\n"
    "call_overhead_us = 10\n"
    "batch_norm_ns = 0.5\nrelu_ns = 0.25\npool_ns = 0.5\nconcat_ns = 0.5\n"
    "loss_ns = 1\ncopy_ns = 0.25\n"
    "conv2d = 64 400 300 200\n"
    "conv2d = 4 100 75 50\n"
    "conv3d = 16 10 20 30\n";

TEST(Machine, ParsesEveryKeyInItsUnit) {
  const Machine m = parse_machine(kText, "test");
  EXPECT_EQ(m.name, "two nodes");
  EXPECT_EQ(m.ranks_per_node, 4);
  EXPECT_EQ(m.cores_per_node, 0);
  EXPECT_DOUBLE_EQ(m.contention, 1.5);
  EXPECT_DOUBLE_EQ(m.intra.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(m.inter.bandwidth_Bps, 25e9);
  EXPECT_DOUBLE_EQ(m.call_overhead_s, 10e-6);
  EXPECT_DOUBLE_EQ(m.relu_s, 0.25e-9);
  ASSERT_EQ(m.conv2d.size(), 2u);
  EXPECT_EQ(m.conv2d[0].channels, 4);  // sorted
}

TEST(Machine, InterpolatesConvolutionThroughputInLogChannels) {
  const Machine m = parse_machine(kText, "test");
  EXPECT_DOUBLE_EQ(m.conv_flops(2, ConvPass::kForward, 4, 4), 100e9);
  EXPECT_DOUBLE_EQ(m.conv_flops(2, ConvPass::kBackwardWeights, 64, 64), 200e9);
  // sqrt(4 * 64) = 16 lies half way between 4 and 64 in log scale.
  EXPECT_NEAR(m.conv_flops(2, ConvPass::kBackwardData, 4, 64), 187.5e9, 1e3);
  EXPECT_NEAR(m.conv_flops(2, ConvPass::kForward, 16, 16), 250e9, 1e3);
  // Clamped past the ends; one entry is a constant.
  EXPECT_DOUBLE_EQ(m.conv_flops(2, ConvPass::kForward, 1, 2), 100e9);
  EXPECT_DOUBLE_EQ(m.conv_flops(2, ConvPass::kForward, 512, 512), 400e9);
  EXPECT_DOUBLE_EQ(m.conv_flops(3, ConvPass::kBackwardData, 4, 4), 20e9);
  EXPECT_THROW(m.conv_flops(1, ConvPass::kForward, 4, 4), Error);
}

TEST(Machine, LinksAndSlowdown) {
  Machine m = parse_machine(kText, "test");
  EXPECT_EQ(&m.link(0, 3), &m.intra);
  EXPECT_EQ(&m.link(3, 4), &m.inter);
  EXPECT_EQ(&m.slowest_link(4), &m.intra);
  EXPECT_EQ(&m.slowest_link(8), &m.inter);
  EXPECT_DOUBLE_EQ(m.compute_slowdown(1), 1.0);  // alone on its node
  EXPECT_DOUBLE_EQ(m.compute_slowdown(8), 1.5);  // contention only
  m.cores_per_node = 2;
  EXPECT_DOUBLE_EQ(m.compute_slowdown(2), 1.5);
  EXPECT_DOUBLE_EQ(m.compute_slowdown(3), 1.5 * 1.5);
  EXPECT_DOUBLE_EQ(m.compute_slowdown(16), 1.5 * 2.0);  // 4 ranks per node
}

TEST(Machine, FormatRoundTrips) {
  const Machine m = parse_machine(kText, "test");
  const Machine back = parse_machine(format_machine(m), "formatted");
  EXPECT_EQ(back.name, m.name);
  EXPECT_DOUBLE_EQ(back.inter.latency_s, m.inter.latency_s);
  EXPECT_DOUBLE_EQ(back.copy_s, m.copy_s);
  EXPECT_EQ(back.conv3d.size(), 1u);
  EXPECT_DOUBLE_EQ(back.conv3d[0].gflops[2], 30);
}

// The message of parsing `text`, which must fail with kInvalidArgument.
std::string failure(const std::string& text) {
  try {
    parse_machine(text, "m.txt");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "parsed: " << text;
  return "";
}

TEST(Machine, BadFilesNameTheLineAndKey) {
  const std::string ok = kText;
  EXPECT_NE(failure(ok + "colour = blue\n").find("m.txt:20: unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(failure(ok + "relu_ns = 2\n").find("'relu_ns' given twice"),
            std::string::npos);
  EXPECT_NE(failure(ok + "conv2d = 4 1 1 1\n").find("given twice"),
            std::string::npos);
  EXPECT_NE(failure(ok + "conv3d = 8 1 1\n").find("expected 4 number(s)"),
            std::string::npos);
  EXPECT_NE(failure(ok + "just words\n").find("expected 'key = value'"),
            std::string::npos);
  std::string no_bw = ok;
  no_bw.replace(no_bw.find("inter_bandwidth_GBps = 25"), 25,
                "inter_bandwidth_GBps = -1");
  EXPECT_NE(failure(no_bw).find("'-1' is not a positive number"),
            std::string::npos);
  std::string shared = ok;
  shared.replace(shared.find("contention = 1.5"), 16, "contention = 0.5");
  EXPECT_NE(failure(shared).find("contention must be at least 1"),
            std::string::npos);
  std::string missing = ok;
  missing.erase(missing.find("copy_ns"), std::string("copy_ns = 0.25\n").size());
  EXPECT_NE(failure(missing).find("missing 'copy_ns'"), std::string::npos);
  EXPECT_THROW(load_machine("/nonexistent/machine.txt"), Error);
}

}  // namespace
}  // namespace model
}  // namespace distconv
