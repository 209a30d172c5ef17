#include "layers/deconvolution.h"

#include <optional>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "layers/internal/channel_cells.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"
#include "layers/internal/gradient_sum.h"
#include "layers/internal/local_conv_of.h"
#include "distconv/internal/layer_checks.h"
#include "kernels/local_conv.h"

namespace distconv {

using internal::for_each_cell;

// The resources a plan runs on: the halo exchange (reverse on dst, forward
// on diff_dst), the local kernels and the gradient allreduce.
template <typename T>
struct Deconvolution<T>::Impl {
  const ProcessGrid* grid;
  DeconvPlan plan;
  HaloExchange<T> halo;
  std::optional<LocalConv<T>> forward_kernel, data_kernel, weights_kernel;
  internal::GradientSum<Compute<T>> grads;  // weights, then bias
  DeconvStats stats;

  Impl(const ProcessGrid& g, DeconvPlan p, const HaloSetupOptions& config)
      : grid(&g),
        plan(std::move(p)),
        halo(g, plan.dst_layout(), config),
        forward_kernel(internal::local_conv_of<T>(plan.forward_kernel)),
        data_kernel(internal::local_conv_of<T>(plan.data_kernel)),
        weights_kernel(internal::local_conv_of<T>(plan.weights_kernel)),
        grads(g.comm(), plan.desc.weights_shape().volume(),
              plan.desc.bias == ConvBias::kAdd ? plan.desc.out_channels : 0) {}

  void check_layout(const DistTensor<T>& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what,
                                "transposed convolution");
  }
};

template <typename T>
Deconvolution<T>::Deconvolution(const ProcessGrid& grid, const DeconvDesc& desc,
                                const Distribution& src,
                                const DeconvolutionOptions& options)
    : Deconvolution(grid, internal::plan_collectively(grid, [&] {
                      internal::check_grid(src, grid.shape(), "input");
                      return plan_deconvolution(desc, src, grid.rank(),
                                                options);
                    }),
                    options.halo) {}

template <typename T>
Deconvolution<T>::Deconvolution(const ProcessGrid& grid, DeconvPlan plan,
                                const HaloSetupOptions& halo) {
  internal::check_given_plan(
      grid, plan.src_layout().distribution(), plan.rank,
      internal::fingerprint(plan, internal::element_name<T>()));
  impl_ = internal::Pimpl<Impl>::make("transposed convolution", grid,
                                      std::move(plan), halo);
}

template <typename T>
const DeconvPlan& Deconvolution<T>::plan() const {
  return impl().plan;
}

template <typename T>
const DeconvDesc& Deconvolution<T>::desc() const {
  return impl().plan.desc;
}
template <typename T>
const ConvGeometry& Deconvolution<T>::geometry() const {
  return impl().plan.geometry;
}
template <typename T>
const HaloLayout& Deconvolution<T>::src_layout() const {
  return impl().plan.src_layout();
}
template <typename T>
const HaloLayout& Deconvolution<T>::dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T>
const HaloLayout& Deconvolution<T>::diff_dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T>
const HaloLayout& Deconvolution<T>::diff_src_layout() const {
  return impl().plan.src_layout();
}
template <typename T>
const DeconvStats& Deconvolution<T>::stats() const {
  return impl().stats;
}
template <typename T>
void Deconvolution<T>::reset_stats() {
  impl().stats = DeconvStats{};
}

template <typename T>
void Deconvolution<T>::forward(const DistTensor<T>& src, const Param* weights,
                               const Param* bias, DistTensor<T>& dst) {
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
  if (w.zero_first) {
    for_each_cell(dst.buffer(), [](T* v, Index channels, Index stride) {
      for (Index c = 0; c < channels; ++c) v[c * stride] = T(0);
    });
  }
  if (s.forward_kernel) {
    s.forward_kernel->backward_data(src.buffer().subview(w.plain_local),
                                    weights, dst.view(w.haloed_local));
  }
  s.stats.halo_wait_s +=
      s.halo.exchange(dst, {HaloDirection::kReverse, HaloReduction::kSum});
  if (has_bias) {
    internal::add_per_channel(dst.interior(), bias);
  }
}

template <typename T>
void Deconvolution<T>::backward_data(DistTensor<T>& diff_dst,
                                     const Param* weights,
                                     DistTensor<T>& diff_src) {
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
  const StridedView<T> out = diff_src.view(w.plain_local);
  if (s.data_kernel) {
    s.data_kernel->forward(diff_dst.view(w.haloed_local), weights, nullptr,
                           out);
  } else {  // the inputs reach padding only (or there are none)
    out.for_each([](const Shape&, T& v) { v = T(0); });
  }
}

template <typename T>
void Deconvolution<T>::backward_weights(const DistTensor<T>& src,
                                        DistTensor<T>& diff_dst,
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
    internal::sum_per_channel(std::as_const(diff_dst).interior(), db);
  }
  s.grads.start(diff_weights, diff_bias);
}

template <typename T>
void Deconvolution<T>::wait_gradients() {
  Impl& s = impl();
  s.stats.allreduce_wait_s += s.grads.wait();
}

template <typename T>
std::string Deconvolution<T>::describe() const {
  const Impl& s = impl();
  auto name = [](const std::optional<LocalConv<T>>& k) {
    return k ? k->implementation() : std::string();
  };
  return s.plan.describe(name(s.forward_kernel), name(s.data_kernel),
                         name(s.weights_kernel));
}

template class Deconvolution<float>;
template class Deconvolution<double>;
template class Deconvolution<bf16>;

}  // namespace distconv
