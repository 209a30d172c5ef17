// What the model's tests share: a made-up machine (round numbers, so that
// expected times can be written down by hand) and a padded 3x3
// convolution.
#ifndef DISTCONV_PERF_MODEL_MODEL_TESTING_H_
#define DISTCONV_PERF_MODEL_MODEL_TESTING_H_

#include <string>

#include "distconv/conv_desc.h"
#include "perf/model/machine.h"

namespace distconv {
namespace model {

// 1 us and 1 GB/s inside a node of `ranks_per_node`, 10 us and 0.1 GB/s
// between nodes; 1 GFLOP/s for every convolution pass; 1 ns per element.
inline Machine test_machine(int ranks_per_node = 64) {
  return parse_machine(
      "name = test\n"
      "ranks_per_node = " + std::to_string(ranks_per_node) + "\n"
      "cores_per_node = 0\ncontention = 1\n"
      "intra_latency_us = 1\nintra_bandwidth_GBps = 1\n"
      "inter_latency_us = 10\ninter_bandwidth_GBps = 0.1\n"
      "call_overhead_us = 1\n"
      "batch_norm_ns = 1\nrelu_ns = 1\npool_ns = 1\nconcat_ns = 1\n"
      "loss_ns = 1\ncopy_ns = 1\n"
      "conv2d = 16 1 1 1\nconv3d = 16 1 1 1\n",
      "test_machine");
}

// A 3x3 convolution padded to keep the extent.
inline ConvDesc same3x3(Index c, Index f) {
  ConvDesc d = ConvDesc::make(c, f, {3, 3});
  d.padding_lower = d.padding_upper = {1, 1};
  return d;
}

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_MODEL_TESTING_H_
