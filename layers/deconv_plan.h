// DeconvPlan: everything one rank of a distributed transposed convolution
// does, as a value. plan_deconvolution() derives it from the description,
// the input distribution (its grid shape included), the options and a
// rank, without MPI: Deconvolution<T> executes it, tests check it without
// mpirun, and the performance model costs it.
//
//   DeconvDesc up = DeconvDesc::make(32, 16, {4, 4});
//   up.stride = {2, 2};
//   up.padding_lower = up.padding_upper = {1, 1};
//   Distribution src(Shape{1, 32, 256, 256}, Shape{1, 1, 2, 1});
//   DeconvPlan plan = plan_deconvolution(up, src, /*rank=*/1);
//   plan.dst_layout();     // the output's halos on rank 1
//   plan.forward_kernel;   // the adjoint's backward-data on the window
//
// The plan is the adjoint convolution's geometry (DeconvDesc::adjoint, from
// the output to the input): the output is distributed so that each part's
// outputs line up with its input shard, and the output tensors carry halos
// covering every output cell the part's inputs touch. Forward runs the
// adjoint's backward-data into the output's shard and halos, then the
// reverse exchange sums the halo cells into their owners and the bias is
// added; backward-data exchanges the output gradient's halos and runs the
// adjoint's forward; backward-weights exchanges them too and sums the
// local weight gradients over every rank. Planned with ConvInput::kInPlace
// the output side is read and written in place with frames at the edges,
// as pooling's input side is (layers/pool_plan.h): forward's boundary
// pieces add through a scratch into the output's frame, sent home by the
// reverse exchange; the backward passes read the gradient's interior in
// place and its edges from its frame.
#ifndef DISTCONV_LAYERS_DECONV_PLAN_H_
#define DISTCONV_LAYERS_DECONV_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "distconv/conv_geometry.h"
#include "distconv/deconv_desc.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "halo/halo_options.h"
#include "layers/conv_kernel_call.h"
#include "layers/conv_options.h"
#include "layers/window_plan.h"

namespace distconv {

struct DeconvolutionOptions : WindowOptions {
  // kInPlace: the output and its gradient where the caller keeps them (no
  // halos), with a frame per tensor for the edges; host memory only
  // (device memory: kUnsupported).
  ConvInput input = ConvInput::kHaloBuffer;
  // Host memory: how the local convolutions choose their implementations
  // (as ConvolutionOptions::cpu).
  CpuConvOptions cpu;
};

// kInPlace: a piece's three local convolutions (the adjoint's passes). A
// boundary piece's forward writes a dense channels-last scratch of its
// window's extent, added into the frame after.
struct DeconvPieceKernels {
  ConvKernelCall forward, data, weights;
  friend bool operator==(const DeconvPieceKernels& a,
                         const DeconvPieceKernels& b) {
    return a.forward == b.forward && a.data == b.data && a.weights == b.weights;
  }
};

struct DeconvPlan {
  DeconvDesc desc;
  ConvGeometry geometry;  // the adjoint convolution: dst -> src
  int rank = 0;
  // haloed: the output and its gradient; plain: the input and its
  // gradient (window.window.dst is this rank's input shard).
  WindowPlan window;
  // The adjoint convolution's passes on the window (kBackwardData for
  // forward, kForward for backward-data, kBackwardWeights); none when the
  // window reads padding only or is empty.
  std::optional<ConvKernelCall> forward_kernel, data_kernel, weights_kernel;
  // What the passes read and write: ConvInput::kInPlace where the options
  // ask. kInPlace only: the pieces and frames' boxes of the output side,
  // with each piece's kernels.
  ConvInput input = ConvInput::kHaloBuffer;
  // How the kernels choose (the options' cpu.search; every rank alike).
  ConvImplSearch search = ConvImplSearch::kHeuristic;
  std::optional<WindowFrames> frames;
  std::vector<DeconvPieceKernels> piece_kernels;

  bool in_place() const { return input == ConvInput::kInPlace; }

  const HaloLayout& src_layout() const { return window.plain; }
  const HaloLayout& dst_layout() const { return window.haloed; }
  // "transposed convolution [src window] -> [dst window]: forward K;
  // backward-data K; backward-weights K\n", each K the kernel's extents
  // ("no kernel (nothing to compute here)" without one).
  std::string describe() const;
  // The same with the kernels named by their implementations.
  std::string describe(const std::string& forward, const std::string& data,
                       const std::string& weights) const;
  friend bool operator==(const DeconvPlan& a, const DeconvPlan& b);
  friend bool operator!=(const DeconvPlan& a, const DeconvPlan& b) {
    return !(a == b);
  }
};

// The plan of part `rank` of `src`'s grid. Validates from global
// information (the same distconv::Error for every rank): the description
// against the input shape, a grid splitting channels (kUnsupported), a
// shared dst_layout not covering the halos.
DeconvPlan plan_deconvolution(const DeconvDesc& desc, const Distribution& src,
                              int rank,
                              const DeconvolutionOptions& options = {});

}  // namespace distconv

#endif  // DISTCONV_LAYERS_DECONV_PLAN_H_
