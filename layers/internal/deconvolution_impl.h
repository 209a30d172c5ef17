// Internal: the transposed convolution's executor, Deconvolution<T,
// Space> (layers/deconvolution.h), written once for every memory space on
// the convolution's backends (layers/internal/conv_backend.h): the
// adjoint convolution's kernels, per-channel operations and gradient sums
// of the space. Included by the .cc that instantiates the layer for a
// space with its backend: layers/deconvolution.cc (host),
// layers/device_deconvolution.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_DECONVOLUTION_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_DECONVOLUTION_IMPL_H_

#include <optional>
#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "layers/deconvolution.h"
#include "layers/internal/conv_backend.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"

namespace distconv {

// The resources a plan runs on: the halo exchange (reverse on dst, forward
// on diff_dst), the local kernels and the gradient allreduce.
template <typename T, typename Space>
struct Deconvolution<T, Space>::Impl {
  using Backend = internal::ConvBackend<T, Space>;
  using Kernel = typename Backend::Kernel;

  const ProcessGrid* grid;
  DeconvPlan plan;
  typename Backend::Context context;
  HaloExchange<T, Space> halo;
  std::optional<Kernel> forward_kernel, data_kernel, weights_kernel;
  typename Backend::Grads grads;  // weights, then bias
  DeconvStats stats;

  Impl(const ProcessGrid& g, DeconvPlan p, const HaloSetupOptions& config,
       const GpuConvOptions& gpu)
      : grid(&g),
        plan(std::move(p)),
        context(config, gpu),
        halo(g, plan.dst_layout(), config),
        forward_kernel(Backend::kernel(context, plan.forward_kernel)),
        data_kernel(Backend::kernel(context, plan.data_kernel)),
        weights_kernel(Backend::kernel(context, plan.weights_kernel)),
        grads(context, g.comm(), plan.desc.weights_shape().volume(),
              plan.desc.bias == ConvBias::kAdd ? plan.desc.out_channels : 0) {
    Backend::agree(g.comm(), {&forward_kernel, &data_kernel, &weights_kernel});
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
                                       const GpuConvOptions& gpu)
    : Deconvolution(grid,
                    internal::plan_collectively(
                        grid,
                        [&] {
                          internal::check_grid(src, grid.shape(), "input");
                          return plan_deconvolution(desc, src, grid.rank(),
                                                    options);
                        }),
                    options.halo, gpu) {}

template <typename T, typename Space>
Deconvolution<T, Space>::Deconvolution(const ProcessGrid& grid, DeconvPlan plan,
                                       const HaloSetupOptions& halo,
                                       const GpuConvOptions& gpu) {
  internal::check_given_plan(
      grid, plan.src_layout().distribution(), plan.rank,
      internal::fingerprint(plan, internal::element_name<T>()));
  impl_ = internal::Pimpl<Impl>::make("transposed convolution", grid,
                                      std::move(plan), halo, gpu);
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
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  const bool has_bias = s.plan.desc.bias == ConvBias::kAdd;
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(src, w.plain, "src");
    s.check_layout(dst, w.haloed, "dst");
    require(weights != nullptr, ErrorKind::kInvalidArgument,
            "weights are null");
    require(bias != nullptr || !has_bias, ErrorKind::kInvalidArgument,
            "the transposed convolution adds a bias but bias is null");
  });
  if (w.zero_first) Impl::Backend::zero(s.context, dst.buffer());
  if (s.forward_kernel) {
    s.forward_kernel->backward_data(src.buffer().subview(w.plain_local),
                                    weights, dst.view(w.haloed_local));
  }
  s.stats.halo_wait_s +=
      s.halo.exchange(dst, {HaloDirection::kReverse, HaloReduction::kSum});
  if (has_bias) Impl::Backend::add_per_channel(s.context, dst.interior(), bias);
}

template <typename T, typename Space>
void Deconvolution<T, Space>::backward_data(DistTensor<T, Space>& diff_dst,
                                            const Param* weights,
                                            DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(diff_dst, w.haloed, "diff_dst");
    s.check_layout(diff_src, w.plain, "diff_src");
    require(weights != nullptr, ErrorKind::kInvalidArgument,
            "weights are null");
  });
  s.stats.halo_wait_s += s.halo.exchange(diff_dst, {});
  s.grads.poke();
  const StridedView<T, Space> out = diff_src.view(w.plain_local);
  if (s.data_kernel) {
    s.data_kernel->forward(diff_dst.view(w.haloed_local), weights, nullptr,
                           out);
  } else {  // the inputs reach padding only (or there are none)
    Impl::Backend::zero(s.context, out);
  }
}

template <typename T, typename Space>
void Deconvolution<T, Space>::backward_weights(const DistTensor<T, Space>& src,
                                               DistTensor<T, Space>& diff_dst,
                                               Param* diff_weights,
                                               Param* diff_bias) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(src, w.plain, "src");
    s.check_layout(diff_dst, w.haloed, "diff_dst");
    require(diff_weights != nullptr, ErrorKind::kInvalidArgument,
            "diff_weights is null");
    require(diff_bias != nullptr || s.plan.desc.bias == ConvBias::kNone,
            ErrorKind::kInvalidArgument,
            "the transposed convolution adds a bias but diff_bias is null");
  });
  s.grads.zero();
  s.stats.halo_wait_s += s.halo.exchange(diff_dst, {});
  if (s.weights_kernel) {
    s.weights_kernel->backward_weights(
        diff_dst.buffer().subview(w.haloed_local),
        src.buffer().subview(w.plain_local), s.grads.weights(), nullptr);
  }
  if (Param* db = s.grads.bias()) {
    Impl::Backend::sum_per_channel(s.context,
                                   std::as_const(diff_dst).interior(), db);
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
  return s.plan.describe(name(s.forward_kernel), name(s.data_kernel),
                         name(s.weights_kernel));
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_DECONVOLUTION_IMPL_H_
