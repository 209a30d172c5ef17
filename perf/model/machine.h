// Machine: the constants of the performance model (perf/model/), read from
// a small text file. A file is either measured here by the calibration
// (perf/model/calibrate) or written by hand for a machine we do not have
// (perf/machines/h100_nvlink.txt, each value's source given in it).
//
//   # comments and blank lines are ignored
//   name = this machine
//   ranks_per_node = 64            # consecutive ranks share a node
//   cores_per_node = 2             # 0: one core or GPU per rank
//   contention = 1.2               # compute slows by this when several
//                                  #  ranks of a node compute at once
//   intra_latency_us = 0.5         # point-to-point, one message
//   intra_bandwidth_GBps = 6       # inside a node
//   inter_latency_us = 2           # between nodes
//   inter_bandwidth_GBps = 25
//   call_overhead_us = 5           # per kernel call
//   batch_norm_ns = 1.2            # per element, forward + backward
//   relu_ns = 0.4                  # per element, forward + backward
//   pool_ns = 0.9                  # per input element, forward + backward
//   concat_ns = 0.5                # per output element, forward + backward
//   loss_ns = 2                    # per element of the prediction
//   copy_ns = 0.3                  # per element a redistribution moves
//   conv2d = 16 40 35 30           # at C = F = 16: GFLOP/s of forward,
//   conv2d = 64 80 70 60           #  backward-data, backward-weights
//   conv3d = 16 30 25 20
//
// Convolution throughput depends most on the channel counts, so each
// spatial rank (2D, 3D) has a table measured at several C = F; a
// convolution with C inputs and F outputs gets the value at sqrt(C * F),
// interpolated linearly in log(channels) and clamped to the table's ends.
#ifndef DISTCONV_PERF_MODEL_MACHINE_H_
#define DISTCONV_PERF_MODEL_MACHINE_H_

#include <array>
#include <string>
#include <vector>

#include "distconv/shape.h"
#include "kernels/conv_pass.h"

namespace distconv {
namespace model {

// A message of `bytes` costs latency_s + bytes / bandwidth_Bps.
struct LinkCost {
  double latency_s = 0;
  double bandwidth_Bps = 1;
  double time(double bytes, double messages) const {
    return messages * latency_s + bytes / bandwidth_Bps;
  }
};

// GFLOP/s of the three passes of a convolution with C = F = channels.
struct ConvThroughput {
  double channels = 0;
  std::array<double, 3> gflops{};
};

struct Machine {
  std::string name;
  int ranks_per_node = 1;
  int cores_per_node = 0;
  double contention = 1;  // >= 1: shared caches and memory bandwidth
  LinkCost intra, inter;
  double call_overhead_s = 0;
  double batch_norm_s = 0, relu_s = 0, pool_s = 0, concat_s = 0, loss_s = 0,
         copy_s = 0;  // per element, as in the file (there in ns)
  std::vector<ConvThroughput> conv2d, conv3d;  // by channels, ascending

  // The interpolated throughput (FLOP/s) of a convolution pass.
  double conv_flops(int spatial_dims, ConvPass pass, double in_channels,
                    double out_channels) const;
  // The link between two ranks: inside a node or between nodes.
  const LinkCost& link(int rank_a, int rank_b) const;
  // The link every message of a collective over `ranks` ranks may cross.
  const LinkCost& slowest_link(int ranks) const;
  // How much slower each rank computes when `ranks` ranks run: ranks on a
  // node beyond its cores share them, and two or more ranks on a node
  // contend for its caches and memory (contention).
  double compute_slowdown(int ranks) const;
};

// Parses the text above; throws kInvalidArgument naming `origin`, the line
// and the key for an unknown key, a malformed or non-positive value, a
// missing key or an empty convolution table.
Machine parse_machine(const std::string& text, const std::string& origin);
// Reads and parses a file (kInvalidArgument when it cannot be read).
Machine load_machine(const std::string& path);
// The text parse_machine reads back (what the calibration writes).
std::string format_machine(const Machine& m);

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_MACHINE_H_
