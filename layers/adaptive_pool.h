// AdaptivePooling<T>: adaptive average or max pooling to a given output
// size (PyTorch's AdaptiveAvgPool2d/3d, AdaptiveMaxPool2d/3d) of tensors
// split over a ProcessGrid: global pooling (size 1) ahead of a dense head,
// DeepLab's image-level branch. Describe (AdaptivePoolDesc), plan
// (plan_adaptive_pool; the constructor plans too), execute (forward,
// backward), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 2, 1});
//   AdaptivePooling<float> pool(grid, {AdaptivePoolKind::kAverage,
//                                      Shape{1, 1, 1}},
//                               Distribution(Shape{2, 64, 32, 32, 32},
//                                            grid.shape()));
//   pool.forward(x, y);          // y: 2x64x1x1x1, on one spatial part
//   pool.backward(dy, dx);
//
// A window may span several ranks. Each rank reduces its part of every
// window of its samples and channels (partial sums, or the best candidate
// with its global index), and one allreduce over the ranks sharing its
// sample and channel coordinates (the plan's set) combines them: every
// rank of the set then knows the whole output of its samples and
// channels, and keeps its shard of the output (spatially balanced over the
// same parts; for global pooling one part holds the cell, the others
// empty shards: gather it where a replicated dense head follows).
// Backward allreduces the output gradient's shards into the whole
// gradient of the set's samples and channels, then each rank writes its
// input gradient: each window's share (average), or the gradient at the
// maximum's cell where it holds it (max). Messages are the whole output
// of a rank's samples and channels (small: adaptive pooling shrinks).
//
// Sums in double, results rounded once to T (fp32, fp64, bf16, fp16).
// Max pooling keeps the first maximum of a window in row-major order, the
// last NaN where there are NaNs (PyTorch's CPU kernels' choice), whatever
// the split. Host memory only. The constructor and passes are collective
// over the grid and validate from global information (the same
// distconv::Error on every rank).
#ifndef DISTCONV_LAYERS_ADAPTIVE_POOL_H_
#define DISTCONV_LAYERS_ADAPTIVE_POOL_H_

#include <string>

#include "distconv/adaptive_pool_desc.h"
#include "distconv/bf16.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "layers/adaptive_pool_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h.
template <typename T>
class AdaptivePooling {
 public:
  AdaptivePooling(const ProcessGrid& grid, const AdaptivePoolDesc& desc,
                  const Distribution& src);

  const AdaptivePoolPlan& plan() const;
  const HaloLayout& src_layout() const;  // no halos
  const HaloLayout& dst_layout() const;  // no halos
  const HaloLayout& diff_src_layout() const { return src_layout(); }
  const HaloLayout& diff_dst_layout() const { return dst_layout(); }

  void forward(const DistTensor<T>& src, DistTensor<T>& dst);
  // Max pooling: the gradient of the last forward()'s maxima (kState on
  // every rank before any forward()).
  void backward(const DistTensor<T>& diff_dst, DistTensor<T>& diff_src);

  std::string describe() const;

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_ADAPTIVE_POOL_H_
