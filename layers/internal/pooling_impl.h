// Internal: the pooling layer's executor, Pooling<T, Space> (see
// layers/pooling.h), written once for every memory space. A space's
// PoolBackend says what runs the plan's leaves there:
//
//   template <typename T>
//   struct PoolBackend<T, HostSpace> {
//     using Kernel = LocalPool<T>;       // forward, backward on views
//     static Kernel kernel(const PoolKernelCall&, const HaloSetupOptions&);
//     // Every cell of t's buffer = 0, ordered as the halo options say.
//     static void zero(const HaloSetupOptions&, DistTensor<T, Space>& t);
//   };
//
// The orchestration (checks on every rank, the halo exchange before the
// kernel forward, the reverse exchange summing halo contributions home
// after it backward) is this file's, the same for every space. Included by
// the .cc that defines a space's backend and instantiates the layer for
// it: layers/pooling.cc (host), layers/device_pooling.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_POOLING_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_POOLING_IMPL_H_

#include <optional>
#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"
#include "layers/pooling.h"

namespace distconv {
namespace internal {

template <typename T, typename Space>
struct PoolBackend;

}  // namespace internal

// The resources a plan runs on: the halo exchange (forward on src,
// reverse on diff_src) and the local kernel; and the state between passes.
template <typename T, typename Space>
struct Pooling<T, Space>::Impl {
  using Backend = internal::PoolBackend<T, Space>;
  using Tensor = DistTensor<T, Space>;

  const ProcessGrid* grid;
  PoolPlan plan;
  HaloSetupOptions options;
  HaloExchange<T, Space> halo;
  std::optional<typename Backend::Kernel> kernel;  // none: no outputs here
  bool forward_ran = false;
  PoolStats stats;

  Impl(const ProcessGrid& g, PoolPlan p, const HaloSetupOptions& config)
      : grid(&g),
        plan(std::move(p)),
        options(config),
        halo(g, plan.src_layout(), config) {
    if (const auto& k = plan.kernel) {
      kernel.emplace(Backend::kernel(*k, config));
    }
  }

  void check_layout(const Tensor& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "pooling");
  }
};

template <typename T, typename Space>
Pooling<T, Space>::Pooling(const ProcessGrid& grid, const PoolDesc& desc,
                           const Distribution& src,
                           const PoolingOptions& options)
    : Pooling(grid, internal::plan_collectively(grid, [&] {
                internal::check_grid(src, grid.shape(), "input");
                return plan_pooling(desc, src, grid.rank(), options);
              }),
              options.halo) {}

template <typename T, typename Space>
Pooling<T, Space>::Pooling(const ProcessGrid& grid, PoolPlan plan,
                           const HaloSetupOptions& halo) {
  internal::check_given_plan(
      grid, plan.src_layout().distribution(), plan.rank,
      internal::fingerprint(plan, internal::element_name<T>()));
  impl_ = internal::Pimpl<Impl>::make("pooling", grid, std::move(plan), halo);
}

template <typename T, typename Space>
const PoolPlan& Pooling<T, Space>::plan() const {
  return impl().plan;
}
template <typename T, typename Space>
const PoolDesc& Pooling<T, Space>::desc() const {
  return impl().plan.desc;
}
template <typename T, typename Space>
const ConvGeometry& Pooling<T, Space>::geometry() const {
  return impl().plan.geometry;
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::src_layout() const {
  return impl().plan.src_layout();
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::diff_dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::diff_src_layout() const {
  return impl().plan.src_layout();
}

template <typename T, typename Space>
const PoolStats& Pooling<T, Space>::stats() const {
  return impl().stats;
}
template <typename T, typename Space>
void Pooling<T, Space>::reset_stats() {
  impl().stats = PoolStats{};
}

template <typename T, typename Space>
void Pooling<T, Space>::forward(DistTensor<T, Space>& src,
                                DistTensor<T, Space>& dst) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(src, w.haloed, "src");
    s.check_layout(dst, w.plain, "dst");
  });
  s.stats.halo_wait_s += s.halo.exchange(src, {});
  if (s.kernel) {
    s.kernel->forward(src.view(w.haloed_local), dst.view(w.plain_local));
  }
  s.forward_ran = true;
}

template <typename T, typename Space>
void Pooling<T, Space>::backward(const DistTensor<T, Space>& src,
                                 const DistTensor<T, Space>& diff_dst,
                                 DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(src, w.haloed, "src");
    s.check_layout(diff_dst, w.plain, "diff_dst");
    s.check_layout(diff_src, w.haloed, "diff_src");
    require(s.forward_ran || s.plan.desc.kind != PoolKind::kMax,
            ErrorKind::kState,
            "max pooling's backward needs a forward first (it sends each "
            "gradient to the maximum forward found)");
  });
  if (w.zero_first) Impl::Backend::zero(s.options, diff_src);
  if (s.kernel) {
    s.kernel->backward(src.buffer().subview(w.haloed_local),
                       diff_dst.buffer().subview(w.plain_local),
                       diff_src.view(w.haloed_local));
  }
  s.stats.halo_wait_s += s.halo.exchange(
      diff_src, {HaloDirection::kReverse, HaloReduction::kSum});
}

template <typename T, typename Space>
std::string Pooling<T, Space>::describe() const {
  const Impl& s = impl();
  return s.plan.describe(s.kernel ? s.kernel->implementation() : "");
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_POOLING_IMPL_H_
