// Test helper: the small networks the planner's tests plan (a chain, and a
// U-Net whose decoder reads the first block again).
#ifndef DISTCONV_PERF_MODEL_PLANNER_NETWORKS_H_
#define DISTCONV_PERF_MODEL_PLANNER_NETWORKS_H_

#include "perf/model/model_testing.h"
#include "perf/model/network.h"

namespace distconv {
namespace model {

// conv-BN-ReLU, a pooling, a conv-ReLU, a 1x1 head with its loss.
inline Network chain(Index samples, Index size) {
  Network net;
  net.name = "chain";
  const Shape x{samples, 4, size, size};
  const Op c1 = Op::convolution(same3x3(4, 8), x);
  const Shape y = c1.dst_shape();
  net.units.push_back({"block",
                       {c1, Op::elementwise(OpKind::kBatchNorm, y),
                        Op::elementwise(OpKind::kRelu, y)},
                       {kNetworkInput}});
  const Op pool = Op::pooling(PoolDesc::make(PoolKind::kMax, {2, 2}), y);
  net.units.push_back({"pool", {pool}, {0}});
  const Op c2 = Op::convolution(same3x3(8, 8), pool.dst_shape());
  net.units.push_back(
      {"conv", {c2, Op::elementwise(OpKind::kRelu, c2.dst_shape())}, {1}});
  const Op head = Op::convolution(ConvDesc::make(8, 2, {1, 1}), c2.dst_shape());
  net.units.push_back(
      {"head", {head, Op::elementwise(OpKind::kLoss, head.dst_shape())}, {2}});
  return net;
}

// A U-Net: the first block's output is read again by the decoder.
inline Network unet(Index samples, Index size) {
  Network net = chain(samples, size);
  net.name = "unet";
  net.units.pop_back();  // no head on the pooled level
  DeconvDesc up = DeconvDesc::make(8, 8, {2, 2});
  up.stride = {2, 2};
  const Op deconv = Op::deconvolution(up, net.output_shape(2));
  net.units.push_back({"up", {deconv}, {2}});
  Shape cat = deconv.dst_shape();
  cat[1] = 16;
  const Op dec = Op::convolution(same3x3(16, 2), cat);
  net.units.push_back({"decoder",
                       {Op::elementwise(OpKind::kConcat, cat), dec,
                        Op::elementwise(OpKind::kLoss, dec.dst_shape())},
                       {0, 3}});  // the skip first: its split is kept
  return net;
}

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_PLANNER_NETWORKS_H_
