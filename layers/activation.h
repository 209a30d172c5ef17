// Activation<T>: an element-wise activation (relu, leaky relu;
// ActivationDesc) on a tensor split over a ProcessGrid. Describe, plan
// (plan_activation in shard_plan.h, or the constructor), execute (forward,
// backward), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 1});      // split H
//   Distribution dist(Shape{1, 16, 512, 512}, grid.shape());
//   Activation<float> relu(grid, ActivationDesc::relu(), dist);
//   DistTensor<float> x(grid, relu.layout()), dx(grid, relu.layout());
//   relu.forward(x, x);                        // in place: x = relu(x)
//   relu.backward_from_dst(x, dx, dx);         // in place: dx *= relu'(.)
//
// Each rank works on its shard alone: no communication, any grid (channels
// may be split too), uneven and empty shards. The layer acts on shard
// interiors only, so a tensor may carry any halo widths and either storage
// order (one allocated for the next convolution's src_layout(), say): only
// its Distribution must be the layer's. Halo cells are never read or
// written. layout() is the plain choice: no halos, channels-last.
//
// In place: forward's dst may be its src, backward's diff_src its diff_dst
// (the same tensor; other overlaps are undefined). Backward needs the sign
// of the input at each cell: backward() reads the input; after an
// in-place forward the input is gone, and backward_from_dst() reads the
// output instead, which has the input's sign when the slope is >= 0 (relu,
// and leaky relu with slope >= 0; with a negative slope it throws
// kUnsupported). The derivative at 0 is the left one (0 or the slope).
//
// GPU memory (Activation<T, DeviceSpace>, docs/gpu.md): the same on
// DistTensor<T, DeviceSpace>, one CUDA thread per element (the host's math
// bit for bit), queued on the stream of the layer's Exec<DeviceSpace>
// (distconv/exec.h), its last argument.
//
// Validation uses global information only (descriptions and
// distributions), so bad input throws the same distconv::Error on every
// rank.
#ifndef DISTCONV_LAYERS_ACTIVATION_H_
#define DISTCONV_LAYERS_ACTIVATION_H_

#include "distconv/activation_desc.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/process_grid.h"
#include "layers/shard_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h in host memory
// (//layers:activation) and in device memory (Activation<T, DeviceSpace>,
// target
// //layers:device_activation, built only with --config=cuda).
template <typename T, typename Space = HostSpace>
class Activation {
 public:
  // `dist` is (N, C, spatial...) with 1 to 3 spatial dimensions.
  Activation(const ProcessGrid& grid, const ActivationDesc& desc,
             const Distribution& dist, const Exec<Space>& exec = {});
  // Runs a plan made beforehand by plan_activation(desc, ...); checked on
  // every rank together (made for this rank, grid and description).
  Activation(const ProcessGrid& grid, const ActivationDesc& desc,
             ShardPlan plan, const Exec<Space>& exec = {});

  const ActivationDesc& desc() const { return desc_; }
  // The distribution of every tensor the layer takes.
  const Distribution& distribution() const { return layout().distribution(); }
  // A layout for src, dst and their gradients: no halos, channels-last.
  const HaloLayout& layout() const { return plan_.layout("src"); }
  const ShardPlan& plan() const { return plan_; }

  // dst = activation(src); dst may be src.
  void forward(const DistTensor<T, Space>& src,
               DistTensor<T, Space>& dst) const;
  // diff_src = activation'(src) * diff_dst, reading the input src;
  // diff_src may be diff_dst.
  void backward(const DistTensor<T, Space>& src,
                const DistTensor<T, Space>& diff_dst,
                DistTensor<T, Space>& diff_src) const;
  // The same from the output dst = activation(src), what an in-place
  // forward leaves; kUnsupported when desc().keeps_sign() is false.
  void backward_from_dst(const DistTensor<T, Space>& dst,
                         const DistTensor<T, Space>& diff_dst,
                         DistTensor<T, Space>& diff_src) const;

 private:
  void backward_from(const DistTensor<T, Space>& sign_of, const char* what,
                     const DistTensor<T, Space>& diff_dst,
                     DistTensor<T, Space>& diff_src) const;

  ActivationDesc desc_;
  ShardPlan plan_;
  Exec<Space> exec_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_ACTIVATION_H_
