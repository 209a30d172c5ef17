// Deconvolution<T>: a transposed convolution (DeconvDesc) whose tensors are
// split over a ProcessGrid (samples and spatial dimensions), giving the
// results of one process: the upsampling half of a U-Net. Describe, plan
// (plan_deconvolution, layers/deconv_plan.h; the constructor plans too),
// execute (forward, backward-data, backward-weights), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 1});      // split H
//   DeconvDesc up = DeconvDesc::make(32, 16, {4, 4});
//   up.stride = {2, 2};
//   up.padding_lower = up.padding_upper = {1, 1};
//   Deconvolution<float> deconv(grid, up, Distribution(Shape{1, 32, 256, 256},
//                                                      grid.shape()));
//   DistTensor<float> x(grid, deconv.src_layout());
//   DistTensor<float> y(grid, deconv.dst_layout());           // 1x16x512x512
//   deconv.forward(x, weights, bias, y);
//   DistTensor<float> dy(grid, deconv.diff_dst_layout());
//   DistTensor<float> dx(grid, deconv.diff_src_layout());
//   deconv.backward_weights(x, dy, dw, db);  // exchanges dy's halos, starts
//   deconv.backward_data(dy, weights, dx);   // the allreduce; this overlaps
//   deconv.wait_gradients();                 // dw, db summed over all ranks
//
// The plan is the adjoint convolution's ConvGeometry (DeconvDesc::adjoint,
// from the output to the input): the output is distributed so that each
// part's outputs line up with its input shard
// (ConvGeometry::src_distribution), and the output tensors carry halos
// covering every output cell the part's inputs touch. Forward computes each
// part's contributions over its output shard and halos (the adjoint
// convolution's backward-data on the local shard), then the reverse halo
// exchange sends the halo cells' contributions home and adds them to their
// owners' cells; the bias is added after. Backward-data is the adjoint
// convolution's forward: it exchanges the output gradient's halos, then
// computes locally; backward-weights exchanges them too and sums local
// partial gradients over every rank (non-blocking, like the convolution's).
//
// Reading and writing the output side in place
// (DeconvolutionOptions::input = ConvInput::kInPlace, host memory): the
// output and its gradient are the caller's shards with no halos
// (shard_layout(), e.g. a framework's tensors wrapped), with a frame of
// dst_layout() per pass that the layer fills only at the edges, so no
// shard is copied whole (layers/deconv_plan.h):
//
//   DeconvolutionOptions o;
//   o.input = ConvInput::kInPlace;
//   Deconvolution<float> up(grid, desc, src_distribution, o);
//   DistTensor<float> y(grid, up.shard_layout()), frame(grid, up.dst_layout());
//   up.forward(x, weights, bias, y, frame);
//   up.backward_weights(x, dy, frame, dw, db);
//   up.backward_data(dy, frame, weights, dx);
//
// Calling the passes of one mode on a layer planned for the other throws
// kInvalidArgument on every rank.
//
// Tensors are stored channels-last (N, [D,] H, W, C); weights (in_channels,
// out_channels / groups, k...) and bias (out_channels) are plain arrays
// replicated on every rank. Supported: 2D and 3D, any kernel, stride,
// dilation, asymmetric padding, output padding, groups, bias; grids
// splitting N and any spatial dimensions, uneven and empty shards. Not yet:
// splitting channels (kUnsupported); overlapping the halo exchanges with
// computation. fp32 runs on oneDNN; fp64 on the reference kernels.
//
// GPU memory (Deconvolution<T, DeviceSpace>; float and double; target
// //layers:device_deconvolution, --config=cuda): the same plan and executor
// on DistTensor<T, DeviceSpace>, with weights, bias and their gradients in
// device memory: cuDNN runs the adjoint convolution's passes (algorithms
// and arithmetic from GpuConvOptions, as the convolution's), cuDNN tensor
// operations zero, add the bias and sum its gradient, all on the stream of
// the layer's Exec<DeviceSpace> (distconv/exec.h), its last argument, and
// the halos travel over the device transports.
//
// Destroying the layer completes a gradient allreduce still in flight.
// The constructor is collective over the grid and validates from global
// information, so bad input throws the same distconv::Error on every rank.
// Passes are collective too. Each checks its arguments on every rank
// together first: a tensor whose layout is not the plan's, on any rank,
// throws the same error on every rank (naming that rank) before any data
// moves, and the layer stays usable.
#ifndef DISTCONV_LAYERS_DECONVOLUTION_H_
#define DISTCONV_LAYERS_DECONVOLUTION_H_

#include <memory>
#include <string>

#include "distconv/conv_geometry.h"
#include "distconv/deconv_desc.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "halo/halo_options.h"
#include "kernels/gpu_conv_options.h"
#include "layers/deconv_plan.h"
#include "layers/layer_stats.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h (16-bit types:
// fp32 weights and gradients, the local kernels on fp32 copies; forward's halo
// contributions are summed in fp32 and rounded per sum) in host and GPU
// memory.
template <typename T, typename Space = HostSpace>
class Deconvolution {
 public:
  using Param = Compute<T>;  // weights, bias and their gradients

  // `gpu`: cuDNN's arithmetic and algorithm search (GPU memory only).
  Deconvolution(const ProcessGrid& grid, const DeconvDesc& desc,
                const Distribution& src,
                const DeconvolutionOptions& options = {},
                const GpuConvOptions& gpu = {}, const Exec<Space>& exec = {});
  // Runs a plan made beforehand for this rank (plan_deconvolution(desc,
  // src, grid.rank(), options)); `halo` and `cpu`: the options' halo
  // configuration and kernel choice.
  Deconvolution(const ProcessGrid& grid, DeconvPlan plan,
                const HaloSetupOptions& halo = {},
                const GpuConvOptions& gpu = {}, const CpuConvOptions& cpu = {},
                const Exec<Space>& exec = {});

  const DeconvPlan& plan() const;
  const DeconvDesc& desc() const;
  // The adjoint convolution's geometry: its src is this layer's output.
  const ConvGeometry& geometry() const;
  const HaloLayout& src_layout() const;  // input, no halos
  // Output, with halos: forward() writes contributions for the neighbours
  // there and sends them home, so they hold no meaning afterwards.
  const HaloLayout& dst_layout() const;
  const HaloLayout& diff_dst_layout() const;  // output gradient, with halos
  const HaloLayout& diff_src_layout() const;  // input gradient, no halos
  // In place: the output's and its gradient's shards (no halos).
  const HaloLayout& shard_layout() const;

  // dst = deconv(src) (+ bias).
  void forward(const DistTensor<T, Space>& src, const Param* weights,
               const Param* bias, DistTensor<T, Space>& dst);
  // diff_src = the input gradient; exchanges diff_dst's halos first.
  void backward_data(DistTensor<T, Space>& diff_dst, const Param* weights,
                     DistTensor<T, Space>& diff_src);
  // Weight (and, with bias, bias) gradients from src's shard and diff_dst
  // (whose halos it exchanges); starts their allreduce over every rank.
  // diff_weights and diff_bias are written by wait_gradients() and must
  // stay valid until then.
  void backward_weights(const DistTensor<T, Space>& src,
                        DistTensor<T, Space>& diff_dst, Param* diff_weights,
                        Param* diff_bias);
  void wait_gradients();

  // The passes planned with ConvInput::kInPlace: dst and diff_dst of
  // shard_layout(), their frames of dst_layout() (scratch: the layer
  // fills the edges and halos it needs).
  void forward(const DistTensor<T, Space>& src, const Param* weights,
               const Param* bias, DistTensor<T, Space>& dst,
               DistTensor<T, Space>& dst_frame);
  void backward_data(const DistTensor<T, Space>& diff_dst,
                     DistTensor<T, Space>& diff_dst_frame, const Param* weights,
                     DistTensor<T, Space>& diff_src);
  void backward_weights(const DistTensor<T, Space>& src,
                        const DistTensor<T, Space>& diff_dst,
                        DistTensor<T, Space>& diff_dst_frame,
                        Param* diff_weights, Param* diff_bias);

  // How this rank's window is computed ("transposed convolution
  // [0:1, 0:32, 0:128, 0:256) -> [0:1, 0:16, 0:258, 0:512): forward
  // brgconv_bwd_d:avx512_core, in place; ...").
  std::string describe() const;
  const DeconvStats& stats() const;
  void reset_stats();

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  // Each pass for both modes: a frame in place, else the buffer with
  // halos (`haloed`: the gradient, non-const for its exchange).
  void forward_pass(const DistTensor<T, Space>& src, const Param* weights,
                    const Param* bias, DistTensor<T, Space>& dst,
                    DistTensor<T, Space>* dst_frame);
  void data_pass(const DistTensor<T, Space>& diff_dst,
                 DistTensor<T, Space>* haloed, DistTensor<T, Space>* frame,
                 const Param* weights, DistTensor<T, Space>& diff_src);
  void weights_pass(const DistTensor<T, Space>& src,
                    const DistTensor<T, Space>& diff_dst,
                    DistTensor<T, Space>* haloed, DistTensor<T, Space>* frame,
                    Param* diff_weights, Param* diff_bias);
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_DECONVOLUTION_H_
