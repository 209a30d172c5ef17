// Pooling<T>: a pooling layer (max, or average with or without padding;
// PoolDesc) whose tensors are split over a ProcessGrid (samples and spatial
// dimensions), giving the results of one process. Describe, plan
// (plan_pooling, layers/pool_plan.h; the constructor plans too), execute
// (forward, backward), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 1});      // split H
//   PoolDesc desc = PoolDesc::make(PoolKind::kMax, {3, 3});
//   desc.stride = {2, 2};
//   desc.padding_lower = desc.padding_upper = {1, 1};
//   Pooling<float> pool(grid, desc,
//                       Distribution(Shape{1, 16, 512, 512}, grid.shape()));
//   DistTensor<float> x(grid, pool.src_layout()), y(grid, pool.dst_layout());
//   pool.forward(x, y);
//   DistTensor<float> dy(grid, pool.diff_dst_layout());
//   DistTensor<float> dx(grid, pool.diff_src_layout());
//   pool.backward(x, dy, dx);
//
// The plan is a convolution's (ConvGeometry of the depthwise convolution
// with the same windows): outputs line up with the input shards, the
// input carries the halos its windows read, and forward exchanges them.
// Backward computes each rank's input-gradient contributions over its
// shard and halos, then the reverse halo exchange sends the halo cells'
// contributions home and adds them to their owners' cells. Max pooling's
// ties resolve as in the serial reference (first cell in window order),
// since every rank sees the same window values.
//
// Reading in place (PoolingOptions::input = ConvInput::kInPlace, host
// memory): the caller's shards with no halos (shard_layout(), e.g. a
// framework's tensors wrapped) and one frame per tensor, of src_layout(),
// kept by the caller between forward and backward; the layer fills only
// the frame's edges and halos, so no shard is copied whole:
//
//   PoolingOptions o;
//   o.input = ConvInput::kInPlace;
//   Pooling<float> pool(grid, desc, src_distribution, o);
//   DistTensor<float> x(grid, pool.shard_layout()),
//       x_frame(grid, pool.src_layout()), y(grid, pool.dst_layout());
//   pool.forward(x, x_frame, y);
//   DistTensor<float> dx(grid, pool.shard_layout()),
//       dx_frame(grid, pool.diff_src_layout());
//   pool.backward(x, x_frame, dy, dx, dx_frame);
//
// Calling the passes of one mode on a layer planned for the other throws
// kInvalidArgument on every rank.
//
// Tensors are stored channels-last (N, [D,] H, W, C). Supported: 2D and
// 3D, any kernel, stride and padding (smaller than the kernel), grids
// splitting N, C and any spatial dimensions (channels pool independently:
// a channel split needs no communication), uneven and empty shards. Not
// yet: overlapping the halo exchange with the interior. fp32 runs on
// oneDNN; fp64 on the reference kernels. The local kernels' implementation
// (kernels/pool_impl.h: oneDNN in slabs or in one call, the reference
// loops) is the heuristic's, the one PoolingOptions::impl asks for, or,
// with PoolingOptions::search = kMeasured, timed on each rank when the
// layer is made and agreed across ranks (docs/pooling.md, "Kernels").
//
// GPU memory (Pooling<T, DeviceSpace>, docs/gpu.md): the same plan and
// passes on DistTensor<T, DeviceSpace> through CUDA kernels (CudaPool: the
// reference's results bit for bit, ties and NaNs included), all queued on
// the stream of the layer's Exec<DeviceSpace> (distconv/exec.h), its last
// argument, halos over the device transports. Every
// grid the host layer takes.
//
// The constructor is collective over the grid and validates from global
// information, so bad input throws the same distconv::Error on every rank.
// Passes are collective too. Each checks its arguments on every rank
// together first: a tensor whose layout is not the plan's, on any rank,
// throws the same error on every rank (naming that rank) before any data
// moves, and the layer stays usable.
#ifndef DISTCONV_LAYERS_POOLING_H_
#define DISTCONV_LAYERS_POOLING_H_

#include <memory>
#include <string>

#include "distconv/conv_geometry.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/pimpl.h"
#include "distconv/pool_desc.h"
#include "distconv/process_grid.h"
#include "halo/halo_options.h"
#include "layers/layer_stats.h"
#include "layers/pool_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h (bf16 and fp16 on
// fp32 copies, rounded once) in host memory (//layers:pooling) and in device
// memory (Pooling<T, DeviceSpace>, target //layers:device_pooling, built only
// with --config=cuda).
template <typename T, typename Space = HostSpace>
class Pooling {
 public:
  Pooling(const ProcessGrid& grid, const PoolDesc& desc,
          const Distribution& src, const PoolingOptions& options = {},
          const Exec<Space>& exec = {});
  // Runs a plan made beforehand for this rank (plan_pooling(desc, src,
  // grid.rank(), options)); `halo` and `timing`: the options' halo
  // configuration and, for a measured kernel choice, how candidates are
  // timed.
  Pooling(const ProcessGrid& grid, PoolPlan plan,
          const HaloSetupOptions& halo = {},
          const PoolImplSearchOptions& timing = {},
          const Exec<Space>& exec = {});

  const PoolPlan& plan() const;
  const PoolDesc& desc() const;
  const ConvGeometry& geometry() const;
  const HaloLayout& src_layout() const;       // input, with halos
  const HaloLayout& dst_layout() const;       // output, no halos
  const HaloLayout& diff_dst_layout() const;  // output gradient, no halos
  // Input gradient: src_layout()'s halos, which backward() fills with
  // contributions for the neighbours and sends home.
  const HaloLayout& diff_src_layout() const;
  // In place: the input's and its gradient's shards (no halos).
  const HaloLayout& shard_layout() const;

  // Exchanges src's halos, then dst = pool(src).
  void forward(DistTensor<T, Space>& src, DistTensor<T, Space>& dst);
  // diff_src = the input gradient (its halo cells hold what was sent home).
  // Max pooling reads the maxima of the last forward(), and throws kState
  // on every rank before any forward(); src must be as forward() left it.
  void backward(const DistTensor<T, Space>& src,
                const DistTensor<T, Space>& diff_dst,
                DistTensor<T, Space>& diff_src);

  // The passes planned with ConvInput::kInPlace: src and diff_src of
  // shard_layout(), the frames of src_layout(); backward reads src and
  // src_frame as forward left them, and overwrites diff_src (its frame is
  // scratch).
  void forward(const DistTensor<T, Space>& src, DistTensor<T, Space>& src_frame,
               DistTensor<T, Space>& dst);
  void backward(const DistTensor<T, Space>& src,
                const DistTensor<T, Space>& src_frame,
                const DistTensor<T, Space>& diff_dst,
                DistTensor<T, Space>& diff_src,
                DistTensor<T, Space>& diff_src_frame);

  // How this rank's window is computed ("pooling [0:1, 0:16, 0:256,
  // 0:512): jit:avx512_core | jit:avx512_core, in place"); in place, a
  // line per piece ("interior max pooling [...]: ...").
  std::string describe() const;
  const PoolStats& stats() const;
  void reset_stats();

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_POOLING_H_
