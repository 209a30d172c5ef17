// PoolPlan: everything one rank of a distributed pooling layer does, as a
// value. plan_pooling() derives it from the description, the input
// distribution (its grid shape included), the options and a rank, without
// MPI: Pooling<T> executes it, tests check it without mpirun, and the
// performance model costs it.
//
//   PoolDesc desc = PoolDesc::make(PoolKind::kMax, {3, 3});
//   desc.padding_lower = desc.padding_upper = {1, 1};
//   Distribution src(Shape{1, 16, 512, 512}, Shape{1, 1, 2, 2});
//   PoolPlan plan = plan_pooling(desc, src, /*rank=*/3);
//   plan.src_layout();    // the input's halos on rank 3
//   plan.window.window;   // its window, global
//   plan.describe();      // "max pooling [...]: 1x16x257x257 -> ..."
//
// The plan is the geometry of the depthwise convolution with the same
// windows (PoolDesc::window_conv): outputs line up with the input shards,
// the input carries the halos its windows read. Forward exchanges the
// input's halos, then runs the kernel; backward runs the kernel into the
// input gradient's shard and halos, then the reverse exchange sums the
// halo cells into their owners (WindowPlan::zero_first: cells the kernel
// does not write are zeroed first).
//
// Planned with ConvInput::kInPlace (PoolingOptions::input), the passes
// read the input and write its gradient where the caller keeps them (the
// shards, no halos) and use a frame (a tensor of src_layout()) only at the
// edges: the outputs split into the interior, whose windows lie in the
// shard and read (and, backward, write) it directly, and boundary boxes,
// whose windows reach into the halos and read the frame. Forward copies
// the edge cells into the frame and exchanges its halos while the
// interior runs. Backward writes the interior's gradient into the shard,
// adds the boundary pieces' gradients into the frame (through a scratch:
// windows overlap, and the kernels overwrite), sends the frame's halo
// cells home by the reverse exchange, and adds the frame's edge cells to
// the shard.
#ifndef DISTCONV_LAYERS_POOL_PLAN_H_
#define DISTCONV_LAYERS_POOL_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "distconv/conv_geometry.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/pool_desc.h"
#include "distconv/shape.h"
#include "halo/halo_options.h"
#include "kernels/pool_impl.h"
#include "layers/conv_options.h"
#include "layers/window_plan.h"

namespace distconv {

// The local pooling the window runs (what LocalPool is built from): the
// window's padding in `desc`, the views' extents and strides.
struct PoolKernelCall {
  PoolDesc desc;
  Shape src_extent, src_strides, dst_extent, dst_strides;
  // Backward's input gradient, when its strides are not src's (empty).
  Shape diff_src_strides;
  // Host memory: the implementation LocalPool tries first (the options',
  // else heuristic_pool_impl(desc)); it takes the next in
  // pool_impl_list() where that one does not apply.
  PoolImpl impl = PoolImpl::kReference;
  friend bool operator==(const PoolKernelCall& a, const PoolKernelCall& b);
};

struct PoolingOptions : WindowOptions {
  // kInPlace: read the input and write its gradient in the caller's
  // shards, with a frame per tensor for the edges (see above); any grid.
  // Host memory only (device memory: kUnsupported).
  ConvInput input = ConvInput::kHaloBuffer;
  // Host memory: the local kernels' implementation (kernels/pool_impl.h);
  // unset: the heuristic's. Ranks must agree on it.
  std::optional<PoolImpl> impl;
  // Host memory: kMeasured times each local pooling's candidates when the
  // layer is made (kernels/pool_impl_search.h, on each rank's own shapes)
  // and every rank runs, for each problem, the fastest any rank found;
  // not with `impl`. kHeuristic: `impl`, or the heuristic's.
  ConvImplSearch search = ConvImplSearch::kHeuristic;
  PoolImplSearchOptions timing;  // how kMeasured times the candidates
};

struct PoolPlan {
  PoolDesc desc;
  ConvGeometry geometry;  // of the window convolution
  int rank = 0;
  // haloed: the input and its gradient; plain: the output and its
  // gradient.
  WindowPlan window;
  std::optional<PoolKernelCall> kernel;  // none: no outputs here

  // What the passes read: ConvInput::kInPlace where the options ask.
  ConvInput input = ConvInput::kHaloBuffer;
  // The implementation the options asked for (unset: the heuristic's),
  // and how the layer chooses: with kMeasured, Pooling<T> sets the kernel
  // calls' impl to what its ranks agreed on when it is made.
  std::optional<PoolImpl> impl;
  ConvImplSearch search = ConvImplSearch::kHeuristic;
  // kInPlace only: the pieces and the frames' boxes, and the local pooling
  // of each piece (a boundary piece's backward writes a dense
  // channels-last scratch of its window's extent: diff_src_strides).
  std::optional<WindowFrames> frames;
  std::vector<PoolKernelCall> piece_kernels;

  bool in_place() const { return input == ConvInput::kInPlace; }
  const HaloLayout& src_layout() const { return window.haloed; }
  const HaloLayout& dst_layout() const { return window.plain; }
  // "max pooling [0:1, 0:16, 0:256, 0:512): 1x16x513x1025 -> 1x16x256x512\n"
  // (the kernel's input and output extents; "no outputs" without one).
  std::string describe() const;
  // The description with the kernel named by `implementation`.
  std::string describe(const std::string& implementation) const;
  friend bool operator==(const PoolPlan& a, const PoolPlan& b);
  friend bool operator!=(const PoolPlan& a, const PoolPlan& b) {
    return !(a == b);
  }
};

// The plan of part `rank` of `src`'s grid. Validates from global
// information (the same distconv::Error for every rank): the description
// against the input shape, a shared src_layout not covering the halos.
PoolPlan plan_pooling(const PoolDesc& desc, const Distribution& src, int rank,
                      const PoolingOptions& options = {});

}  // namespace distconv

#endif  // DISTCONV_LAYERS_POOL_PLAN_H_
