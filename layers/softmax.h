// Softmax<T>: softmax or log-softmax over the channel dimension of a tensor
// split over a ProcessGrid (samples and spatial dimensions), giving the
// results of one process. Every (n, spatial) cell's C values are
// normalised on their own, so each rank works on its shard alone: no
// communication. Describe (SoftmaxOptions), plan (plan_softmax in
// shard_plan.h, or the constructor), execute (forward, backward), many
// times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 1});      // split H
//   Softmax<float> softmax(grid,
//                          Distribution(Shape{2, 10, 64, 64}, grid.shape()));
//   DistTensor<float> x(grid, softmax.src_layout());
//   DistTensor<float> y(grid, softmax.dst_layout());
//   softmax.forward(x, y);
//   DistTensor<float> dy(grid, softmax.diff_dst_layout());
//   DistTensor<float> dx(grid, softmax.diff_src_layout());
//   softmax.backward(y, dy, dx);       // from the output, not the input
//
// What it computes (SoftmaxKind, distconv/loss_desc.h), per cell, the
// cell's maximum subtracted first:
//   kSoftmax:    y_c = exp(x_c) / sum_k exp(x_k)
//                backward: dx_c = y_c (dy_c - sum_k dy_k y_k)
//   kLogSoftmax: y_c = x_c - log sum_k exp(x_k)
//                backward: dx_c = dy_c - exp(y_c) sum_k dy_k
// Each cell is computed in double and rounded once.
//
// Layouts: the plan's layouts are channels-last without halos, but every
// pass accepts any tensor whose layout has the plan's Distribution (halos
// of another layer's layout, either storage order): passes read and write
// shard interiors only and leave halo cells alone. Outputs may be their
// inputs (forward(x, x), backward(y, dy, dy)).
//
// GPU memory (Softmax<T, DeviceSpace>; float and double; target
// //layers:device_softmax, --config=cuda): the same layer on
// DistTensor<T, DeviceSpace>, one CUDA thread per (n, spatial) cell running
// the host loops' own cell functions (kernels/channel_cells.h) in double,
// queued on the stream of the layer's Exec<DeviceSpace> (its last
// argument); results within an ulp or so of the host's (the GPU's exp and
// log).
//
// Supported: 2D and 3D, grids splitting N and any spatial dimensions,
// uneven and empty shards. Not supported: a grid splitting channels
// (kUnsupported). The constructor validates from global information, so
// bad input throws the same distconv::Error on every rank; a tensor of
// another distribution throws kShapeMismatch on the rank that passed it.
#ifndef DISTCONV_LAYERS_SOFTMAX_H_
#define DISTCONV_LAYERS_SOFTMAX_H_

#include <memory>
#include <string>

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/loss_desc.h"
#include "distconv/memory_space.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "layers/shard_plan.h"  // SoftmaxOptions

namespace distconv {

// Defined for every element type of distconv/element_types.h in host and GPU
// memory.
template <typename T, typename Space = HostSpace>
class Softmax {
 public:
  Softmax(const ProcessGrid& grid, const Distribution& src,
          const SoftmaxOptions& options = {}, const Exec<Space>& exec = {});
  // Runs a plan made beforehand by plan_softmax(..., options); checked on
  // every rank together (made for this rank, grid and options).
  Softmax(const ProcessGrid& grid, ShardPlan plan,
          const SoftmaxOptions& options = {}, const Exec<Space>& exec = {});

  SoftmaxKind kind() const;
  const Distribution& distribution() const;  // of all four tensors
  // Channels-last, no halos; the four are the same layout.
  const HaloLayout& src_layout() const;
  const HaloLayout& dst_layout() const;
  const HaloLayout& diff_dst_layout() const;
  const HaloLayout& diff_src_layout() const;
  const ShardPlan& plan() const;

  void forward(const DistTensor<T, Space>& src, DistTensor<T, Space>& dst);
  // dst is forward()'s output.
  void backward(const DistTensor<T, Space>& dst,
                const DistTensor<T, Space>& diff_dst,
                DistTensor<T, Space>& diff_src);

  // "softmax [0:2, 0:10, 0:32, 0:64): loops in double".
  std::string describe() const;

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_SOFTMAX_H_
