#include "layers/pooling.h"

#include <optional>
#include <utility>

#include "distconv/error.h"
#include "halo/halo_exchange.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "kernels/local_pool.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"

namespace distconv {

// The resources a plan runs on: the halo exchange (forward on src,
// reverse on diff_src) and the local kernel; and the state between passes.
template <typename T>
struct Pooling<T>::Impl {
  const ProcessGrid* grid;
  PoolPlan plan;
  HaloExchange<T> halo;
  std::optional<LocalPool<T>> kernel;  // none: no outputs here
  bool forward_ran = false;
  PoolStats stats;

  Impl(const ProcessGrid& g, PoolPlan p, const HaloSetupOptions& config)
      : grid(&g), plan(std::move(p)), halo(g, plan.src_layout(), config) {
    if (const auto& k = plan.kernel) {
      kernel.emplace(k->desc, k->src_extent, k->src_strides, k->dst_extent,
                     k->dst_strides);
    }
  }

  void check_layout(const DistTensor<T>& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "pooling");
  }
};

template <typename T>
Pooling<T>::Pooling(const ProcessGrid& grid, const PoolDesc& desc,
                    const Distribution& src, const PoolingOptions& options)
    : Pooling(grid, internal::plan_collectively(grid, [&] {
                internal::check_grid(src, grid.shape(), "input");
                return plan_pooling(desc, src, grid.rank(), options);
              }),
              options.halo) {}

template <typename T>
Pooling<T>::Pooling(const ProcessGrid& grid, PoolPlan plan,
                    const HaloSetupOptions& halo) {
  internal::check_given_plan(
      grid, plan.src_layout().distribution(), plan.rank,
      internal::fingerprint(plan, internal::element_name<T>()));
  impl_ = internal::Pimpl<Impl>::make("pooling", grid, std::move(plan), halo);
}

template <typename T>
const PoolPlan& Pooling<T>::plan() const {
  return impl().plan;
}
template <typename T>
const PoolDesc& Pooling<T>::desc() const {
  return impl().plan.desc;
}
template <typename T>
const ConvGeometry& Pooling<T>::geometry() const {
  return impl().plan.geometry;
}
template <typename T>
const HaloLayout& Pooling<T>::src_layout() const {
  return impl().plan.src_layout();
}
template <typename T>
const HaloLayout& Pooling<T>::dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T>
const HaloLayout& Pooling<T>::diff_dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T>
const HaloLayout& Pooling<T>::diff_src_layout() const {
  return impl().plan.src_layout();
}

template <typename T>
const PoolStats& Pooling<T>::stats() const {
  return impl().stats;
}
template <typename T>
void Pooling<T>::reset_stats() {
  impl().stats = PoolStats{};
}

template <typename T>
void Pooling<T>::forward(DistTensor<T>& src, DistTensor<T>& dst) {
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

template <typename T>
void Pooling<T>::backward(const DistTensor<T>& src,
                          const DistTensor<T>& diff_dst,
                          DistTensor<T>& diff_src) {
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
  if (w.zero_first) {
    diff_src.buffer().for_each([](const Shape&, T& v) { v = T(0); });
  }
  if (s.kernel) {
    s.kernel->backward(src.buffer().subview(w.haloed_local),
                       diff_dst.buffer().subview(w.plain_local),
                       diff_src.view(w.haloed_local));
  }
  s.stats.halo_wait_s += s.halo.exchange(
      diff_src, {HaloDirection::kReverse, HaloReduction::kSum});
}

template <typename T>
std::string Pooling<T>::describe() const {
  const Impl& s = impl();
  return s.plan.describe(s.kernel ? s.kernel->implementation() : "");
}

template class Pooling<float>;
template class Pooling<double>;
template class Pooling<bf16>;

}  // namespace distconv
