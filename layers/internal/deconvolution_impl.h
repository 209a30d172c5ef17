// Internal: the transposed convolution's executor, Deconvolution<T,
// Space> (layers/deconvolution.h), written once for every memory space on
// what the convolution takes from a space (layers/internal/conv_kernels.h):
// the adjoint convolution's kernels, per-channel primitives and gradient
// sums of the space; reading and writing the output side in place
// (ConvInput::kInPlace: pieces, frames) is host memory's only. Included by the
// .cc that instantiates the layer for a space with its kernels:
// layers/deconvolution.cc (host), layers/device_deconvolution.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_DECONVOLUTION_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_DECONVOLUTION_IMPL_H_

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "kernels/space_ops.h"
#include "layers/deconvolution.h"
#include "layers/internal/conv_kernels.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"
#include "layers/internal/space_kernel.h"
#include "layers/internal/window_frames.h"

namespace distconv {

// The resources a plan runs on: the halo exchange (reverse on dst, forward
// on diff_dst), the local kernels and the gradient allreduce.
template <typename T, typename Space>
struct Deconvolution<T, Space>::Impl {
  using Comms = internal::ConvComms<T, Space>;
  using Kernel = internal::SpaceKernelOf<ConvKernelCall, T, Space>;
  using Tensor = DistTensor<T, Space>;
  static constexpr bool kHost = std::is_same_v<Space, HostSpace>;
  struct PieceKernels {
    std::optional<Kernel> forward, data, weights;
  };

  // First, so that it outlives the kernels (the GPU's share its cuDNN
  // handle and workspace).
  Exec<Space> exec;
  const ProcessGrid* grid;
  DeconvPlan plan;
  Comms comms;
  HaloExchange<T, Space> halo;
  std::optional<Kernel> forward_kernel, data_kernel, weights_kernel;
  std::vector<PieceKernels> pieces;  // in place: per piece
  std::vector<T> scratch;            // in place: a boundary piece's output
  typename Comms::Grads grads;       // weights, then bias
  DeconvStats stats;

  Impl(const ProcessGrid& g, DeconvPlan p, const HaloSetupOptions& config,
       const GpuConvOptions& gpu, const CpuConvOptions& cpu,
       const Exec<Space>& e)
      : exec(e),
        grid(&g),
        plan(std::move(p)),
        comms(e, config),
        halo(g, plan.dst_layout(), config, e),
        grads(comms, g.comm(), plan.desc.weights_shape().volume(),
              plan.desc.bias == ConvBias::kAdd ? plan.desc.out_channels : 0) {
    if (plan.in_place()) {
      require(kHost, ErrorKind::kUnsupported,
              "the transposed convolution reads and writes its output side "
              "in place (ConvInput::kInPlace) in host memory only; plan it "
              "with ConvInput::kHaloBuffer");
    }
    // The implementations to run (the host's measured search: collective),
    // then the kernels, then the ranks' agreement on the GPU's choices. In
    // place, the pieces' kernels run; otherwise the window's.
    std::vector<ConvKernelCall*> calls;
    for (DeconvPieceKernels& k : plan.piece_kernels) {
      for (ConvKernelCall* c : {&k.forward, &k.data, &k.weights}) {
        calls.push_back(c);
      }
    }
    if (!plan.in_place()) {
      for (auto* c :
           {&plan.forward_kernel, &plan.data_kernel, &plan.weights_kernel}) {
        if (*c) calls.push_back(&**c);
      }
    }
    KernelCache own;  // measured, no cache of the caller's: this layer's
    internal::choose_conv_impls<T>(exec, g.comm(), calls, cpu, own);
    std::vector<std::optional<Kernel>*> all;
    pieces.reserve(plan.piece_kernels.size());
    for (const DeconvPieceKernels& k : plan.piece_kernels) {
      pieces.push_back(
          {make(k.forward, gpu), make(k.data, gpu), make(k.weights, gpu)});
      PieceKernels& p = pieces.back();
      for (auto* kernel : {&p.forward, &p.data, &p.weights}) {
        all.push_back(kernel);
      }
    }
    if (!plan.in_place()) {
      forward_kernel = make(plan.forward_kernel, gpu);
      data_kernel = make(plan.data_kernel, gpu);
      weights_kernel = make(plan.weights_kernel, gpu);
      for (auto* kernel : {&forward_kernel, &data_kernel, &weights_kernel}) {
        all.push_back(kernel);
      }
    }
    internal::agree_conv_kernels(exec, g.comm(), all);
  }

  // The kernel of a call (none without one).
  std::optional<Kernel> make(const std::optional<ConvKernelCall>& call,
                             const GpuConvOptions& gpu) const {
    std::optional<Kernel> k;
    if (call) k.emplace(internal::make_kernel<T>(exec, *call, gpu));
    return k;
  }

  const HaloLayout& haloed_side(bool in_place) const {
    return in_place ? plan.frames->shard : plan.dst_layout();
  }

  // In place, forward: the boundary pieces' outputs added into the frame,
  // sent home by the reverse exchange while the interior writes the
  // shard, then the frame's edges added to the shard.
  void forward_in_place(const Tensor& src, const Param* w, Tensor& dst,
                        Tensor& frame) {
    if constexpr (kHost) {
      const WindowFrames& f = *plan.frames;
      internal::add_boundary_pieces(
          f, scratch, frame,
          [&](size_t i, const WindowPiece& p, const StridedView<T>& part) {
            pieces[i].forward->backward_data(src.buffer().subview(p.out_local),
                                             w, part);
          });
      halo.start(frame, {HaloDirection::kReverse, HaloReduction::kSum});
      f.for_pieces(false, [&](size_t i, const WindowPiece& p) {
        pieces[i].forward->backward_data(src.buffer().subview(p.out_local), w,
                                         dst.view(p.in_local));
      });
      internal::zero_rest(f, dst);
      stats.halo_wait_s += halo.wait();
      internal::add_edges(f, frame, dst);
    }
  }

  // In place, the backward passes: the gradient's edges into its frame,
  // exchanged while the interior runs on the shard, then the boundary
  // pieces on the frame: run(kernels, view of the gradient, piece).
  template <typename Run>
  void read_in_place(const Tensor& dy, Tensor& frame, Run run) {
    if constexpr (kHost) {
      const WindowFrames& f = *plan.frames;
      internal::fill_edges(f, dy, frame);
      halo.start(frame);
      f.for_pieces(false, [&](size_t i, const WindowPiece& p) {
        run(pieces[i], dy.buffer().subview(p.in_local), p);
      });
      stats.halo_wait_s += halo.wait();
      f.for_pieces(true, [&](size_t i, const WindowPiece& p) {
        run(pieces[i], std::as_const(frame).buffer().subview(p.in_local), p);
      });
    }
  }

  template <typename Tensor>
  void check_layout(const Tensor& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what,
                                "transposed convolution");
  }
};

template <typename T, typename Space>
Deconvolution<T, Space>::Deconvolution(const ProcessGrid& grid,
                                       const DeconvDesc& desc,
                                       const Distribution& src,
                                       const DeconvolutionOptions& options,
                                       const GpuConvOptions& gpu,
                                       const Exec<Space>& exec)
    : Deconvolution(grid,
                    internal::plan_collectively(
                        grid,
                        [&] {
                          internal::check_grid(src, grid.shape(), "input");
                          return plan_deconvolution(desc, src, grid.rank(),
                                                    options);
                        }),
                    options.halo, gpu, options.cpu, exec) {}

template <typename T, typename Space>
Deconvolution<T, Space>::Deconvolution(const ProcessGrid& grid, DeconvPlan plan,
                                       const HaloSetupOptions& halo,
                                       const GpuConvOptions& gpu,
                                       const CpuConvOptions& cpu,
                                       const Exec<Space>& exec) {
  internal::check_given_plan(
      grid, plan.src_layout().distribution(), plan.rank,
      internal::layer_fingerprint<T, Space>(plan), [&] {
        require(plan.search == cpu.search, ErrorKind::kInvalidArgument,
                "the transposed convolution was planned for another kernel "
                "choice than the one given");
      });
  impl_ = internal::Pimpl<Impl>::make("transposed convolution", grid,
                                      std::move(plan), halo, gpu, cpu, exec);
}

template <typename T, typename Space>
const DeconvPlan& Deconvolution<T, Space>::plan() const {
  return impl().plan;
}

template <typename T, typename Space>
const DeconvDesc& Deconvolution<T, Space>::desc() const {
  return impl().plan.desc;
}
template <typename T, typename Space>
const ConvGeometry& Deconvolution<T, Space>::geometry() const {
  return impl().plan.geometry;
}
template <typename T, typename Space>
const HaloLayout& Deconvolution<T, Space>::src_layout() const {
  return impl().plan.src_layout();
}
template <typename T, typename Space>
const HaloLayout& Deconvolution<T, Space>::dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T, typename Space>
const HaloLayout& Deconvolution<T, Space>::diff_dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T, typename Space>
const HaloLayout& Deconvolution<T, Space>::diff_src_layout() const {
  return impl().plan.src_layout();
}
template <typename T, typename Space>
const HaloLayout& Deconvolution<T, Space>::shard_layout() const {
  const Impl& s = impl();
  require(s.plan.in_place(), ErrorKind::kState,
          "shard_layout(): the transposed convolution was not planned to "
          "read in place (ConvInput::kInPlace)");
  return s.plan.frames->shard;
}

template <typename T, typename Space>
const DeconvStats& Deconvolution<T, Space>::stats() const {
  return impl().stats;
}
template <typename T, typename Space>
void Deconvolution<T, Space>::reset_stats() {
  impl().stats = DeconvStats{};
}

template <typename T, typename Space>
void Deconvolution<T, Space>::forward(const DistTensor<T, Space>& src,
                                      const Param* weights, const Param* bias,
                                      DistTensor<T, Space>& dst) {
  forward_pass(src, weights, bias, dst, nullptr);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::forward(const DistTensor<T, Space>& src,
                                      const Param* weights, const Param* bias,
                                      DistTensor<T, Space>& dst,
                                      DistTensor<T, Space>& dst_frame) {
  forward_pass(src, weights, bias, dst, &dst_frame);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::forward_pass(const DistTensor<T, Space>& src,
                                           const Param* weights,
                                           const Param* bias,
                                           DistTensor<T, Space>& dst,
                                           DistTensor<T, Space>* dst_frame) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  const bool has_bias = s.plan.desc.bias == ConvBias::kAdd;
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), dst_frame != nullptr,
                           "transposed convolution");
    s.check_layout(src, w.plain, "src");
    s.check_layout(dst, s.haloed_side(dst_frame != nullptr), "dst");
    if (dst_frame) s.check_layout(*dst_frame, w.haloed, "dst_frame");
    require(weights != nullptr, ErrorKind::kInvalidArgument,
            "weights are null");
    require(bias != nullptr || !has_bias, ErrorKind::kInvalidArgument,
            "the transposed convolution adds a bias but bias is null");
  });
  if (dst_frame) {
    s.forward_in_place(src, weights, dst, *dst_frame);
  } else {
    if (w.zero_first) zero<T>(s.exec, dst.buffer());
    if (s.forward_kernel) {
      s.forward_kernel->backward_data(src.buffer().subview(w.plain_local),
                                      weights, dst.view(w.haloed_local));
    }
    s.stats.halo_wait_s +=
        s.halo.exchange(dst, {HaloDirection::kReverse, HaloReduction::kSum});
  }
  if (has_bias) add_per_channel<T>(s.exec, dst.interior(), bias);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::backward_data(DistTensor<T, Space>& diff_dst,
                                            const Param* weights,
                                            DistTensor<T, Space>& diff_src) {
  data_pass(diff_dst, &diff_dst, nullptr, weights, diff_src);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::backward_data(
    const DistTensor<T, Space>& diff_dst, DistTensor<T, Space>& diff_dst_frame,
    const Param* weights, DistTensor<T, Space>& diff_src) {
  data_pass(diff_dst, nullptr, &diff_dst_frame, weights, diff_src);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::data_pass(const DistTensor<T, Space>& diff_dst,
                                        DistTensor<T, Space>* haloed,
                                        DistTensor<T, Space>* frame,
                                        const Param* weights,
                                        DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), frame != nullptr,
                           "transposed convolution");
    s.check_layout(diff_dst, s.haloed_side(frame != nullptr), "diff_dst");
    if (frame) s.check_layout(*frame, w.haloed, "diff_dst_frame");
    s.check_layout(diff_src, w.plain, "diff_src");
    require(weights != nullptr, ErrorKind::kInvalidArgument,
            "weights are null");
  });
  if (frame) {
    for (const Box& r : s.plan.frames->plain_rest) {
      zero<T>(s.exec, diff_src.view(r));
    }
    s.read_in_place(
        diff_dst, *frame,
        [&](typename Impl::PieceKernels& k,
            const StridedView<const T, Space>& dy, const WindowPiece& p) {
          k.data->forward(dy, weights, nullptr, diff_src.view(p.out_local));
        });
    s.grads.poke();
    return;
  }
  s.stats.halo_wait_s += s.halo.exchange(*haloed, {});
  s.grads.poke();
  const StridedView<T, Space> out = diff_src.view(w.plain_local);
  if (s.data_kernel) {
    s.data_kernel->forward(haloed->view(w.haloed_local), weights, nullptr, out);
  } else {  // the inputs reach padding only (or there are none)
    zero<T>(s.exec, out);
  }
}

template <typename T, typename Space>
void Deconvolution<T, Space>::backward_weights(const DistTensor<T, Space>& src,
                                               DistTensor<T, Space>& diff_dst,
                                               Param* diff_weights,
                                               Param* diff_bias) {
  weights_pass(src, diff_dst, &diff_dst, nullptr, diff_weights, diff_bias);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::backward_weights(
    const DistTensor<T, Space>& src, const DistTensor<T, Space>& diff_dst,
    DistTensor<T, Space>& diff_dst_frame, Param* diff_weights,
    Param* diff_bias) {
  weights_pass(src, diff_dst, nullptr, &diff_dst_frame, diff_weights,
               diff_bias);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::weights_pass(const DistTensor<T, Space>& src,
                                           const DistTensor<T, Space>& diff_dst,
                                           DistTensor<T, Space>* haloed,
                                           DistTensor<T, Space>* frame,
                                           Param* diff_weights,
                                           Param* diff_bias) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), frame != nullptr,
                           "transposed convolution");
    s.check_layout(src, w.plain, "src");
    s.check_layout(diff_dst, s.haloed_side(frame != nullptr), "diff_dst");
    if (frame) s.check_layout(*frame, w.haloed, "diff_dst_frame");
    require(diff_weights != nullptr, ErrorKind::kInvalidArgument,
            "diff_weights is null");
    require(diff_bias != nullptr || s.plan.desc.bias == ConvBias::kNone,
            ErrorKind::kInvalidArgument,
            "the transposed convolution adds a bias but diff_bias is null");
  });
  s.grads.zero();
  if (frame) {
    s.read_in_place(
        diff_dst, *frame,
        [&](typename Impl::PieceKernels& k,
            const StridedView<const T, Space>& dy, const WindowPiece& p) {
          k.weights->backward_weights(dy, src.buffer().subview(p.out_local),
                                      s.grads.weights(), nullptr);
        });
  } else {
    s.stats.halo_wait_s += s.halo.exchange(*haloed, {});
    if (s.weights_kernel) {
      s.weights_kernel->backward_weights(
          diff_dst.buffer().subview(w.haloed_local),
          src.buffer().subview(w.plain_local), s.grads.weights(), nullptr);
    }
  }
  if (Param* db = s.grads.bias()) {
    sum_per_channel<T>(s.exec, diff_dst.interior(), db);
  }
  s.grads.start(diff_weights, diff_bias);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::wait_gradients() {
  Impl& s = impl();
  s.stats.allreduce_wait_s += s.grads.wait();
}

template <typename T, typename Space>
std::string Deconvolution<T, Space>::describe() const {
  const Impl& s = impl();
  auto name = [](const std::optional<typename Impl::Kernel>& k) {
    return k ? k->implementation() : std::string();
  };
  if (!s.plan.in_place()) {
    return s.plan.describe(name(s.forward_kernel), name(s.data_kernel),
                           name(s.weights_kernel));
  }
  std::string out;
  for (size_t i = 0; i < s.pieces.size(); ++i) {
    const WindowPiece& p = s.plan.frames->pieces[i];
    DeconvPlan one = s.plan;
    one.window.window = p.window;
    out += (p.reads_frame ? "boundary " : "interior ") +
           one.describe(name(s.pieces[i].forward), name(s.pieces[i].data),
                        name(s.pieces[i].weights));
  }
  return out.empty() ? s.plan.describe("", "", "") : out;
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_DECONVOLUTION_IMPL_H_
