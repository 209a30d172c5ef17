// Convolution<T>: a convolution layer whose tensors are split over a
// ProcessGrid (samples and spatial dimensions), giving the results of one
// process. Describe (ConvDesc), plan (the constructor: output
// distribution, per-rank halo widths, kernels), execute (forward,
// backward-data, backward-weights), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 1});      // split H
//   ConvDesc desc = ConvDesc::make(16, 16, {3, 3});
//   desc.padding_lower = desc.padding_upper = {1, 1};
//   Convolution<float> conv(grid, desc,
//                           Distribution(Shape{1, 16, 1024, 1024},
//                                        grid.shape()));
//   DistTensor<float> x(grid, conv.src_layout()), y(grid, conv.dst_layout());
//   conv.forward(x, weights, bias, y);
//   DistTensor<float> dy(grid, conv.diff_dst_layout());
//   DistTensor<float> dx(grid, conv.diff_src_layout());
//   conv.backward_weights(x, dy, dw, db);   // starts the allreduce
//   conv.backward_data(dy, weights, dx);    // while it travels
//   conv.wait_gradients();                  // dw, db summed over all ranks
//
// Tensors are stored channels-last (N, [D,] H, W, C) with halos. Weights
// (F, C / groups, k...) and bias (F) are plain arrays, of which each rank
// holds the block weights_block() / bias_block() names: the whole tensors
// unless the grid splits channels. Forward exchanges the input's halos;
// backward-data exchanges the output gradient's halos; backward-weights
// sums local partial gradients and allreduces them over the ranks holding
// the same block (non-blocking: it overlaps backward-data). With
// ConvOverlap::kInteriorFirst, the part of each pass that needs no halo
// runs while the halos travel, the rest after.
//
// Channel and filter parallelism: when the grid splits channels (grid
// dimension 1, P parts), the input is split by channels and the output by
// filters (balanced), over the same P ranks of each channel group
// (ProcessGrid::along(1)), together with any sample and spatial split. A
// grouped convolution whose parts hold whole groups needs nothing more:
// each rank convolves its own groups. Otherwise (groups == 1) the
// ChannelParallelism option picks the scheme of Dryden et al. (SC'19):
//  - kStationaryOutput: forward gathers every input channel onto each rank
//    of the channel group (allgather) and computes its own filters;
//    backward-data computes partial input gradients of every channel and
//    sums them onto their owners (reduce-scatter). Weights block: (own
//    filters, all channels).
//  - kStationaryInput: forward computes partial outputs of every filter
//    from the rank's own channels and sums them onto their owners
//    (reduce-scatter); the backward passes gather every filter of the
//    output gradient (allgather). Weights block: (all filters, own
//    channels).
//  - kStationaryWeights: the P ranks as Pc x Pf (Pc = channel_blocks), a
//    2D split of the weights: member (i, j) holds input-channel block i
//    (gathered over the Pf members of its row) and filter block j, whose
//    partial outputs are summed over the Pc members of its column
//    (reduce-scatter) and the pieces sent to their owners; backward-data
//    the reverse. Weights block: (filter block j, channel block i).
//    Pc = 1 is kStationaryOutput, Pc = P kStationaryInput.
// The gathered tensors' halos are exchanged after the gather, between the
// ranks of the same channel coordinate, overlapped with the interior as
// above; the channel collectives themselves are blocking. A scheme keeps
// what it gathered between passes: when it gathers the input (Pf > 1),
// backward_weights reads the input channels the last forward() gathered
// (it must be given the same src tensor); when it gathers the output
// gradient (Pc > 1), the two backward passes share one gather of diff_dst
// when given the same tensor after the same forward().
//
// Circular padding (ConvDesc::padding_mode): the input's halos past the
// ends of a periodic dimension are filled from the other end (a rank that
// holds the whole dimension wraps onto itself; halos may span several
// ranks), and the local convolutions run without padding there.
// backward_data computes the gradients of those padding cells into a
// buffer of the layer's (ConvPlan::diff_src_folded), adds them to the
// cells at the other end (a reverse halo exchange), and copies the shard
// to diff_src (one pass over it).
//
// Supported: 2D and 3D, any kernel, stride, dilation, asymmetric padding
// (zeros or circular, per dimension), groups, bias; grids splitting N, C
// and any spatial dimensions, uneven and empty shards. fp32 runs on oneDNN;
// fp64 on the reference kernels (oneDNN has no fp64 convolution).
//
// GPU memory (Convolution<T, DeviceSpace>, docs/gpu.md): the same plan and
// passes on DistTensor<T, DeviceSpace>, with weights, bias and gradients
// as device arrays, through cuDNN (ConvolutionOptions::gpu: strict fp32 or
// TF32, heuristic or timed algorithm choice), all queued on the stream of
// the layer's Exec<DeviceSpace> (distconv/exec.h), its last argument, on
// every grid the host layer takes
// (channel splits through layers/internal/device_channel_collective.h).
//
// Destroying the layer completes a gradient allreduce still in flight.
// The constructor is collective over the grid and validates from global
// information, so bad input throws the same distconv::Error on every rank.
// Passes are collective too. Each checks its arguments on every rank
// together first: a tensor whose layout is not the plan's, on any rank,
// throws the same error on every rank (naming that rank) before any data
// moves, and the layer stays usable.
#ifndef DISTCONV_LAYERS_CONVOLUTION_H_
#define DISTCONV_LAYERS_CONVOLUTION_H_

#include <memory>
#include <optional>

#include "distconv/bf16.h"
#include "distconv/conv_desc.h"
#include "distconv/conv_geometry.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "layers/conv_options.h"
#include "layers/conv_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h in host memory
// (//layers:convolution) and in device memory (Convolution<T,
// DeviceSpace>, target //layers:device_convolution, built only with
// --config=cuda).
template <typename T, typename Space = HostSpace>
class Convolution {
 public:
  // The weights', bias' and gradients' type: T, or fp32 for bf16 tensors.
  using Param = Compute<T>;

  // Plans this rank's part (plan_convolution) and makes what it runs on.
  Convolution(const ProcessGrid& grid, const ConvDesc& desc,
              const Distribution& src, const ConvolutionOptions& options = {},
              const Exec<Space>& exec = {});
  // Runs a plan made beforehand for this rank of `grid`, its halos
  // travelling as `halo` says (the transport the plan was made for), its
  // kernels chosen as `cpu` says (the search the plan was made for).
  Convolution(const ProcessGrid& grid, ConvPlan plan,
              const HaloSetupOptions& halo = {}, const GpuConvOptions& gpu = {},
              const CpuConvOptions& cpu = {}, const Exec<Space>& exec = {});

  const ConvPlan& plan() const;
  const ConvGeometry& geometry() const;
  const HaloLayout& src_layout() const;       // input, with halos
  const HaloLayout& dst_layout() const;       // output, no halos
  const HaloLayout& diff_dst_layout() const;  // output gradient, with halos
  const HaloLayout& diff_src_layout() const;  // input gradient, no halos
  // This rank's block of the weights (F, C / groups, k...) and of the bias
  // (F), in their global coordinates: the weight and bias arguments point
  // at dense row-major arrays of these extents (null when empty).
  const Box& weights_block() const;
  const Box& bias_block() const;

  // Exchanges src's halos, then dst = conv(src) (+ bias).
  void forward(DistTensor<T, Space>& src, const Param* weights,
               const Param* bias, DistTensor<T, Space>& dst);
  // diff_src = the input gradient; exchanges diff_dst's halos first.
  void backward_data(DistTensor<T, Space>& diff_dst, const Param* weights,
                     DistTensor<T, Space>& diff_src);
  // Weight (and, with bias, bias) gradients from src (its halos as
  // forward() left them) and diff_dst's shard; starts their allreduce over
  // the ranks holding the same weight block. diff_weights and diff_bias
  // (this rank's blocks) are written by wait_gradients() and must stay
  // valid until then.
  void backward_weights(const DistTensor<T, Space>& src,
                        const DistTensor<T, Space>& diff_dst,
                        Param* diff_weights, Param* diff_bias);
  void wait_gradients();

  // The passes of a convolution planned with ConvInput::kInPlace
  // (plan().input): src and diff_dst are the shards themselves (tensors of
  // the plain layouts: src's distribution, channels-last, no halos, and
  // dst_layout(); a framework's tensors wrapped), read where they are;
  // src_frame and diff_dst_frame are tensors of src_layout() and
  // diff_dst_layout(), of which the layer fills and reads only the cells
  // next to the shard's edges and the halos (ConvPlan::x_frame,
  // dy_frame). backward_weights reads src_frame as forward() left it.
  //
  //   ConvolutionOptions o;
  //   o.input = ConvInput::kInPlace;
  //   Convolution<float> conv(grid, desc, dist, o);
  //   DistTensor<float> x = DistTensor<float>::wrap(grid, plain, data, n);
  //   DistTensor<float> frame(grid, conv.src_layout());
  //   conv.forward(x, frame, weights, bias, y);
  //   conv.backward_weights(x, frame, dy, dw, db);
  //   conv.backward_data(dy, dy_frame, weights, dx);
  //
  // Called the other way (a frame with a kHaloBuffer plan, or none with a
  // kInPlace one), a pass throws kInvalidArgument on every rank.
  void forward(const DistTensor<T, Space>& src, DistTensor<T, Space>& src_frame,
               const Param* weights, const Param* bias,
               DistTensor<T, Space>& dst);
  void backward_data(const DistTensor<T, Space>& diff_dst,
                     DistTensor<T, Space>& diff_dst_frame,
                     const Param* weights, DistTensor<T, Space>& diff_src);
  void backward_weights(const DistTensor<T, Space>& src,
                        const DistTensor<T, Space>& src_frame,
                        const DistTensor<T, Space>& diff_dst,
                        Param* diff_weights, Param* diff_bias);

  // How each piece of this rank's work is computed, one line per piece
  // ("forward core [0:1, 0:16, 1:511, 0:1024): brgconv:avx512_core, in
  // place"): the plan's pieces with the kernel each one runs.
  std::string describe() const;
  const ConvStats& stats() const;
  void reset_stats();

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_CONVOLUTION_H_
