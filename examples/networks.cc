#include "examples/networks.h"

#include <algorithm>
#include <string>

#include "distconv/error.h"
#include "distconv/pool_desc.h"

namespace distconv {
namespace examples {

using model::kNetworkInput;
using model::Op;
using model::OpKind;

ConvDesc same_conv(Index in_channels, Index out_channels, const Shape& kernel,
                   PaddingMode mode) {
  ConvDesc d = ConvDesc::make(in_channels, out_channels, kernel);
  for (int k = 0; k < kernel.ndims(); ++k) {
    d.padding_lower[k] = d.padding_upper[k] = kernel[k] / 2;
  }
  d.padding_mode.assign(kernel.ndims(), mode);
  return d;
}

namespace {

// A conv-BN-ReLU block's operations on `src`; `src` becomes its output.
void add_block(std::vector<Op>& ops, const ConvDesc& conv, Shape& src) {
  ops.push_back(Op::convolution(conv, src));
  src = ops.back().dst_shape();
  ops.push_back(Op::elementwise(OpKind::kBatchNorm, src));
  ops.push_back(Op::elementwise(OpKind::kRelu, src));
}

}  // namespace

std::vector<IntegerOption> SegmentationShape::options() {
  return {{"--samples=", &samples}, {"--channels=", &channels},
          {"--size=", &size},       {"--height=", &height},
          {"--width=", &width},     {"--classes=", &classes}};
}

void SegmentationShape::check() {
  if (height == 0) height = size;
  require(size % 2 == 0 && height % 2 == 0, ErrorKind::kInvalidArgument,
          "image ", height, " x ", size, ": both extents must be even",
          " (one 2x2 pooling and its upsampling)");
  require(classes >= 2, ErrorKind::kInvalidArgument, "--classes=", classes,
          ": at least 2");
}

std::string SegmentationShape::describe() const {
  return "segmentation: " + std::to_string(samples) + " x " +
         std::to_string(channels) + " x " + std::to_string(height) + " x " +
         std::to_string(size) + " input, width " + std::to_string(width) +
         ", " + std::to_string(classes) + " classes, padding " +
         to_string(padding_mode);
}

std::string CosmoflowShape::describe() const {
  return "cosmoflow: " + std::to_string(samples) + " x " +
         std::to_string(kCosmoflowChannels) + " x " + std::to_string(size) +
         "^3 input, " + std::to_string(stacks) + " stacks from width " +
         std::to_string(width) + ", dense " + std::to_string(hidden) +
         " -> " + std::to_string(kCosmoflowTargets) + ", padding " +
         to_string(padding_mode);
}

ConvDesc segmentation_head(Index width, Index classes) {
  ConvDesc d = ConvDesc::make(width, classes, {1, 1});
  d.bias = ConvBias::kAdd;
  return d;
}

DeconvDesc segmentation_upsample(Index in, Index out) {
  DeconvDesc d = DeconvDesc::make(in, out, {2, 2});
  d.stride = {2, 2};
  d.bias = ConvBias::kAdd;
  return d;
}

model::Network segmentation_network(const SegmentationShape& s) {
  model::Network net;
  net.name = "segmentation";
  const Index w = s.width;
  Shape x = s.input();
  model::Unit level1{"level 1", {}, {kNetworkInput}};
  add_block(level1.ops, same_conv(s.channels, w, {3, 3}, s.padding_mode), x);
  add_block(level1.ops, same_conv(w, w, {3, 3}, s.padding_mode), x);
  const Shape skip = x;
  model::Unit level2{"level 2", {}, {kLevel1}};
  level2.ops.push_back(Op::pooling(PoolDesc::make(PoolKind::kMax, {2, 2}), x));
  x = level2.ops.back().dst_shape();
  add_block(level2.ops, same_conv(w, 2 * w, {3, 3}, s.padding_mode), x);
  add_block(level2.ops, same_conv(2 * w, 2 * w, {3, 3}, s.padding_mode), x);
  level2.ops.push_back(Op::deconvolution(segmentation_upsample(2 * w, w), x));
  // The skip first: the decoder keeps its split (examples/move.h).
  model::Unit decoder{"decoder", {}, {kLevel1, kLevel2}};
  x = skip;
  x[1] = 2 * w;
  decoder.ops.push_back(Op::elementwise(OpKind::kConcat, x));
  add_block(decoder.ops, same_conv(2 * w, w, {3, 3}, s.padding_mode), x);
  decoder.ops.push_back(Op::convolution(segmentation_head(w, s.classes), x));
  decoder.ops.push_back(
      Op::elementwise(OpKind::kLoss, decoder.ops.back().dst_shape()));
  net.units = {level1, level2, decoder};
  net.validate();
  return net;
}

std::vector<IntegerOption> CosmoflowShape::options() {
  return {{"--samples=", &samples},
          {"--size=", &size},
          {"--stacks=", &stacks},
          {"--width=", &width},
          {"--hidden=", &hidden}};
}

void CosmoflowShape::check() const {
  require(stacks <= 8 && size % (Index{1} << stacks) == 0,
          ErrorKind::kInvalidArgument, "--size=", size, " must be a multiple",
          " of 2^stacks = ", Index{1} << std::min<Index>(stacks, 8),
          " (each stack halves the volume; at most 8 stacks)");
}

ConvDesc cosmoflow_dense(Index in, Index out, Index extent) {
  ConvDesc d = ConvDesc::make(in, out, {extent, extent, extent});
  d.bias = ConvBias::kAdd;
  return d;
}

model::Network cosmoflow_network(const CosmoflowShape& s) {
  model::Network net;
  net.name = "cosmoflow";
  Shape x = s.input();
  Index channels = kCosmoflowChannels;
  for (Index l = 0; l < s.stacks; ++l) {
    model::Unit stack{"stack " + std::to_string(l + 1), {},
                      {l == 0 ? kNetworkInput : static_cast<int>(l - 1)}};
    add_block(stack.ops, same_conv(channels, s.width << l, {3, 3, 3},
                                          s.padding_mode), x);
    stack.ops.push_back(
        Op::pooling(PoolDesc::make(PoolKind::kMax, {2, 2, 2}), x));
    x = stack.ops.back().dst_shape();
    channels = s.width << l;
    net.units.push_back(stack);
  }
  model::Unit head{"head", {}, {static_cast<int>(s.stacks - 1)}};
  head.ops.push_back(Op::convolution(
      cosmoflow_dense(s.features(), s.hidden, s.head_extent()), x));
  x = head.ops.back().dst_shape();
  head.ops.push_back(Op::elementwise(OpKind::kRelu, x));
  head.ops.push_back(
      Op::convolution(cosmoflow_dense(s.hidden, kCosmoflowTargets, 1), x));
  head.ops.push_back(
      Op::elementwise(OpKind::kLoss, head.ops.back().dst_shape()));
  net.units.push_back(head);
  net.validate();
  return net;
}

}  // namespace examples
}  // namespace distconv
