// The training examples' networks described twice over from one place:
// their sizes (the command-line options) and their descriptors, and the
// same network as the performance model's units (perf/model/network.h),
// which the planner assigns grids to (--grid=auto).
//
// A unit is what one grid runs; the examples move tensors between units
// whose grids differ (examples/move.h):
//  - segmentation: "level 1" (two conv-BN-ReLU blocks), "level 2" (max
//    pool, two blocks, the transposed convolution), "decoder" (the
//    concatenation with level 1's output, a block, the 1x1 head and the
//    loss);
//  - cosmoflow: one unit per conv-BN-ReLU + pooling stack, then "head"
//    (the two dense layers as convolutions, their ReLU and the loss).
#ifndef DISTCONV_EXAMPLES_NETWORKS_H_
#define DISTCONV_EXAMPLES_NETWORKS_H_

#include <string>
#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/deconv_desc.h"
#include "distconv/shape.h"
#include "examples/training.h"
#include "kernels/conv_impl.h"
#include "perf/model/network.h"

namespace distconv {
namespace examples {

// A stride-1 convolution padded to keep the spatial extent (odd kernel).
// Stride 1, padding kernel / 2 on both sides, of `mode` in every spatial
// dimension.
ConvDesc same_conv(Index in_channels, Index out_channels, const Shape& kernel,
                   PaddingMode mode = PaddingMode::kZeros);

struct SegmentationShape {
  Index samples = 2, channels = 18, size = 256, width = 16, classes = 3;
  Index height = 0;  // 0: size (a square image)
  PaddingMode padding_mode = PaddingMode::kZeros;  // of the 3x3 convolutions
  // How the convolutions pick their CPU kernels, and whether the blocks
  // fuse batch norm and ReLU (neither part of describe()).
  CpuConvOptions kernels;
  BnRelu bn_relu = BnRelu::kFused;
  // --samples=, --channels=, --size=, --height=, --width=, --classes=
  std::vector<IntegerOption> options();
  // Sets height when 0; throws kInvalidArgument for odd extents or fewer
  // than 2 classes.
  void check();
  Shape input() const { return {samples, channels, height, size}; }
  // What checkpoints belong to: "segmentation: 2 x 18 x 256 x 256 input,
  // width 16, 3 classes, padding zeros".
  std::string describe() const;
};
enum SegmentationUnit { kLevel1 = 0, kLevel2 = 1, kDecoder = 2 };
ConvDesc segmentation_head(Index width, Index classes);  // 1x1, bias
DeconvDesc segmentation_upsample(Index in, Index out);   // 2x2 stride 2
model::Network segmentation_network(const SegmentationShape& s);

inline constexpr Index kCosmoflowChannels = 4, kCosmoflowTargets = 4;
struct CosmoflowShape {
  Index samples = 4, size = 32, stacks = 3, width = 16, hidden = 64;
  PaddingMode padding_mode = PaddingMode::kZeros;  // of the 3x3x3 ones
  // How the convolutions pick their CPU kernels, and whether the blocks
  // fuse batch norm and ReLU (neither part of describe()).
  CpuConvOptions kernels;
  BnRelu bn_relu = BnRelu::kFused;
  // --samples=, --size=, --stacks=, --width=, --hidden=
  std::vector<IntegerOption> options();
  // Throws kInvalidArgument unless size is a multiple of 2^stacks (at
  // most 8 stacks).
  void check() const;
  Shape input() const {
    return {samples, kCosmoflowChannels, size, size, size};
  }
  Index head_extent() const { return size >> stacks; }
  Index features() const { return width << (stacks - 1); }
  // What checkpoints belong to: "cosmoflow: 4 x 4 x 32^3 input, 3 stacks
  // from width 16, dense 64 -> 4, padding zeros".
  std::string describe() const;
};
// A dense layer as a convolution whose kernel covers `extent`^3, bias.
ConvDesc cosmoflow_dense(Index in, Index out, Index extent);
model::Network cosmoflow_network(const CosmoflowShape& s);

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_NETWORKS_H_
