// Upsample<T>: nearest-neighbour upsampling by an integer factor per
// spatial dimension (UpsampleDesc), on tensors split over a ProcessGrid.
// Describe, plan (plan_upsample in shard_plan.h, or the constructor),
// execute (forward, backward), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 2});
//   Upsample<float> up(grid, UpsampleDesc{Shape{2, 2}},
//                      Distribution(Shape{1, 64, 128, 128}, grid.shape()));
//   DistTensor<float> x(grid, up.src_layout()), y(grid, up.dst_layout());
//   up.forward(x, y);                      // y: 1 x 64 x 256 x 256
//   up.backward(diff_y, diff_x);           // block sums
//
// The output distribution (UpsampleDesc::dst_distribution) scales every
// rank's input shard by the factors, so its output cells copy its own
// input cells: no communication, any grid (channels may be split too),
// uneven and empty shards. Backward sums each block of f0 x f1 x ...
// output gradients into its input cell, in row-major order within the
// block.
//
// Tensors are read and written through their shard interiors: they may
// carry any halo widths and either storage order (the next convolution's
// src_layout() for the output, say); only their Distributions must be the
// plan's. Halo cells are never read or written. The plan's layouts are the
// plain choice: no halos, channels-last, where the loops run over
// contiguous channels.
//
// GPU memory (Upsample<T, DeviceSpace>; float and double; target
// //layers:device_upsample, built only with --config=cuda): the same on
// DistTensor<T, DeviceSpace>, one CUDA thread per output cell (forward)
// or input cell (backward, summing its block in the host's order, so the
// results are the host's bit for bit), queued on the stream of the
// layer's Exec<DeviceSpace> (distconv/exec.h), its last argument.
//
// Validation uses global information only, so bad input throws the same
// distconv::Error on every rank.
#ifndef DISTCONV_LAYERS_UPSAMPLE_H_
#define DISTCONV_LAYERS_UPSAMPLE_H_

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/process_grid.h"
#include "distconv/upsample_desc.h"
#include "layers/shard_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h in host and device
// memory.
template <typename T, typename Space = HostSpace>
class Upsample {
 public:
  Upsample(const ProcessGrid& grid, const UpsampleDesc& desc,
           const Distribution& src, const Exec<Space>& exec = {});
  // Runs a plan made beforehand by plan_upsample(desc, ...); checked on
  // every rank together (made for this rank, grid and description).
  Upsample(const ProcessGrid& grid, const UpsampleDesc& desc, ShardPlan plan,
           const Exec<Space>& exec = {});

  const UpsampleDesc& desc() const { return desc_; }
  const Distribution& src_distribution() const {
    return src_layout().distribution();
  }
  const Distribution& dst_distribution() const {
    return dst_layout().distribution();
  }
  // Plain layouts (no halos, channels-last); any layout with the same
  // distribution does as well.
  const HaloLayout& src_layout() const { return plan_.layout("src"); }
  const HaloLayout& dst_layout() const { return plan_.layout("dst"); }
  const ShardPlan& plan() const { return plan_; }

  // dst = src repeated f times along each spatial dimension.
  void forward(const DistTensor<T, Space>& src,
               DistTensor<T, Space>& dst) const;
  // diff_src = the sums of diff_dst over the blocks (overwritten).
  void backward(const DistTensor<T, Space>& diff_dst,
                DistTensor<T, Space>& diff_src) const;

 private:
  UpsampleDesc desc_;
  ShardPlan plan_;
  Exec<Space> exec_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_UPSAMPLE_H_
