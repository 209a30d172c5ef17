#include "layers/pooling.h"

#include <optional>
#include <sstream>
#include <utility>

#include "distconv/error.h"
#include "halo/halo_exchange.h"
#include "distconv/internal/layer_checks.h"
#include "kernels/local_pool.h"

namespace distconv {

template <typename T>
struct Pooling<T>::Impl {
  const ProcessGrid* grid;
  PoolDesc desc;
  ConvGeometry geometry;
  Distribution dst;
  HaloLayout src_layout, dst_layout;
  HaloExchange<T> halo;  // forward on src, reverse on diff_src
  ConvWindow window;     // this rank's, global coordinates
  Box in_local, out_local;
  std::optional<LocalPool<T>> kernel;  // none: no outputs here
  // Backward: buffer cells the kernel does not overwrite (shard cells no
  // output reads, halos past the window, or all without a kernel) must be
  // zeroed first, since they get no contribution.
  bool zero_first = true;
  bool forward_ran = false;
  PoolStats stats;

  Impl(const ProcessGrid& g, const PoolDesc& d, const Distribution& src,
       const PoolingOptions& o)
      : grid(&g),
        desc(d),
        geometry(checked_window_conv(d, src), src.global_shape()),
        dst(geometry.dst_distribution(src)),
        src_layout(chosen_layout(
            o.src_layout,
            geometry.src_layout(src, dst, StorageOrder::kChannelsLast),
            "src")),
        dst_layout(HaloLayout(dst).with_storage(StorageOrder::kChannelsLast)),
        halo(g, src_layout, o.halo) {
    const int rank = g.rank();
    window = geometry.forward_window(dst_layout.shard(rank));
    in_local = window.src.shifted(-src_layout.buffer_box(rank).lower);
    out_local = window.dst.shifted(-dst_layout.buffer_box(rank).lower);
    if (!window.dst.empty()) {
      PoolDesc local = desc;
      local.padding_lower = window.padding_lower;
      local.padding_upper = window.padding_upper;
      kernel.emplace(local, window.src.extent, src_layout.local_strides(rank),
                     window.dst.extent, dst_layout.local_strides(rank));
      zero_first = window.src != src_layout.buffer_box(rank);
    }
  }

  static ConvDesc checked_window_conv(const PoolDesc& d,
                                      const Distribution& src) {
    d.validate(src.global_shape());
    return d.window_conv(src.global_shape()[1]);
  }

  void check_layout(const DistTensor<T>& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "pooling");
  }
};

template <typename T>
Pooling<T>::Pooling(const ProcessGrid& grid, const PoolDesc& desc,
                    const Distribution& src, const PoolingOptions& options) {
  internal::check_grid(src, grid.shape(), "input");
  impl_ = internal::Pimpl<Impl>::make(
      "pooling", grid, desc, src, options);
}

template <typename T>
const PoolDesc& Pooling<T>::desc() const {
  return impl().desc;
}
template <typename T>
const ConvGeometry& Pooling<T>::geometry() const {
  return impl().geometry;
}
template <typename T>
const HaloLayout& Pooling<T>::src_layout() const {
  return impl().src_layout;
}
template <typename T>
const HaloLayout& Pooling<T>::dst_layout() const {
  return impl().dst_layout;
}
template <typename T>
const HaloLayout& Pooling<T>::diff_dst_layout() const {
  return impl().dst_layout;
}
template <typename T>
const HaloLayout& Pooling<T>::diff_src_layout() const {
  return impl().src_layout;
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
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(dst, s.dst_layout, "dst");
  s.stats.halo_wait_s += s.halo.exchange(src, {});
  if (s.kernel) s.kernel->forward(src.view(s.in_local), dst.view(s.out_local));
  s.forward_ran = true;
}

template <typename T>
void Pooling<T>::backward(const DistTensor<T>& src,
                          const DistTensor<T>& diff_dst,
                          DistTensor<T>& diff_src) {
  Impl& s = impl();
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(diff_dst, s.dst_layout, "diff_dst");
  s.check_layout(diff_src, s.src_layout, "diff_src");
  require(s.forward_ran || s.desc.kind != PoolKind::kMax, ErrorKind::kState,
          "max pooling's backward needs a forward first (it sends each "
          "gradient to the maximum forward found)");
  if (s.zero_first) {
    diff_src.buffer().for_each([](const Shape&, T& v) { v = T(0); });
  }
  if (s.kernel) {
    s.kernel->backward(src.buffer().subview(s.in_local),
                       diff_dst.buffer().subview(s.out_local),
                       diff_src.view(s.in_local));
  }
  s.stats.halo_wait_s += s.halo.exchange(
      diff_src, {HaloDirection::kReverse, HaloReduction::kSum});
}

template <typename T>
std::string Pooling<T>::describe() const {
  const Impl& s = impl();
  std::ostringstream out;
  out << to_string(s.desc.kind) << " pooling " << s.window.dst << ": "
      << (s.kernel ? s.kernel->implementation() : std::string("no outputs"))
      << "\n";
  return out.str();
}

template class Pooling<float>;
template class Pooling<double>;

}  // namespace distconv
