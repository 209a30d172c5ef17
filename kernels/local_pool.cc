#include "kernels/local_pool.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "kernels/copy_view.h"
#include "kernels/onednn/pool.h"
#include "kernels/reference/pool.h"

namespace distconv {

template <typename T>
struct LocalPool<T>::Impl {
  using P = Compute<T>;  // what the kernels run on (fp32 for bf16)
  PoolDesc desc;
  Shape src_extent, dst_extent, src_strides, dst_strides, diff_src_strides;
  bool in_place = false;
  PoolImpl impl = PoolImpl::kReference;
  std::optional<onednn::Pool> onednn;
  std::string why_not;  // why the implementations asked for did not apply
  // oneDNN's staged runs: dense channels-last copies; src_copy also holds
  // diff_src, dst_copy diff_dst.
  mutable std::vector<P> src_copy, dst_copy;
  // The reference loops' NCHW copies (made on first use): src, dst or
  // diff_dst, and diff_src.
  mutable std::vector<P> ref_src, ref_dst, ref_grad;
  // Max pooling with oneDNN: whether the last forward's input held a NaN
  // or a -Inf (oneDNN skips NaNs and starts its maxima at the lowest
  // finite float, so a window of -Inf would give -3.4e38; the reference
  // loops then ran, and backward must follow them).
  mutable bool special_seen = false;

  // The views must be those the plan was made for.
  // (`src` is diff_src for backward's, `src_side` its strides.)
  template <typename U, typename V>
  void check(const StridedView<U>& src, const StridedView<V>& dst,
             const Shape& src_side) const {
    require(src.extent() == src_extent && src.strides() == src_side &&
                dst.extent() == dst_extent && dst.strides() == dst_strides,
            ErrorKind::kShapeMismatch, "local pooling planned for views ",
            src_extent, " / ", dst_extent, " with strides ", src_side, " / ",
            dst_strides, " got ", src.extent(), " / ", dst.extent(),
            " with strides ", src.strides(), " / ", dst.strides());
  }
  static StridedView<P> staged(std::vector<P>& v, const Shape& extent,
                               StorageOrder order) {
    v.resize(static_cast<size_t>(extent.volume()));
    return StridedView<P>(v.data(), extent, dense_strides(extent, order));
  }

  // The reference loops on NCHW copies: for double, for what oneDNN
  // refuses, and for max pooling over a NaN or -Inf.
  void reference_forward(StridedView<const T> src, StridedView<T> dst) const {
    const StridedView<P> in = staged(ref_src, src_extent, kNchw);
    const StridedView<P> out = staged(ref_dst, dst_extent, kNchw);
    copy_view<T>(src, in);
    reference::pool_fwd<P>(desc, src_extent, in.data(), dst_extent, out.data());
    copy_view<P>(out, dst);
  }
  void reference_backward(StridedView<const T> src,
                          StridedView<const T> diff_dst,
                          StridedView<T> diff_src) const {
    const StridedView<P> dd = staged(ref_dst, dst_extent, kNchw);
    const StridedView<P> ds = staged(ref_grad, src_extent, kNchw);
    copy_view<T>(diff_dst, dd);
    const P* x = nullptr;  // the averages do not read src
    if (desc.kind == PoolKind::kMax) {
      copy_view<T>(src, staged(ref_src, src_extent, kNchw));
      x = ref_src.data();
    }
    reference::pool_bwd<P>(desc, src_extent, x, dst_extent, dd.data(),
                           ds.data());
    copy_view<P>(ds, diff_src);
  }

  static constexpr StorageOrder kNchw = StorageOrder::kChannelsFirst;
};

namespace {

// Whether any of the n values at p is NaN or -Inf; vectorised, over
// kStreams parts of the values side by side (one core fetches them from
// memory about 1.6 times as fast as one stream: measured 10.3 against
// 6.4 ms on 64 MiB), kStep values of each at a time, so that a find ends
// the scan early.
bool any_nan_or_minus_inf(const float* p, Index n) {
  constexpr Index kStreams = 8, kStep = 256;
  const float minus_inf = -std::numeric_limits<float>::infinity();
  const Index part = n / kStreams;
  int found = 0;
  auto scan = [&](const float* q, Index count) {
#pragma omp simd reduction(| : found)
    for (Index j = 0; j < count; ++j) {
      found |= (q[j] != q[j]) | (q[j] == minus_inf);
    }
  };
  for (Index i = 0; i < part; i += kStep) {
    const Index count = std::min(kStep, part - i);
    for (Index s = 0; s < kStreams; ++s) scan(p + s * part + i, count);
    if (found != 0) return true;
  }
  scan(p + kStreams * part, n - kStreams * part);
  return found != 0;
}

// PoolImpl::kSlabs runs oneDNN in slabs of about this much input (half of
// a 2 MiB L2); max pooling looks at each for NaN and -Inf right before
// oneDNN reads it: the training step took 0.76-0.97 of the time of one
// scan of the whole input followed by one call, which fetched the input
// from memory twice (docs/performance.md).
constexpr Index kSlabBytes = Index{1} << 20;

}  // namespace

template <typename T>
LocalPool<T>::LocalPool(const PoolDesc& desc, const Shape& src_extent,
                        const Shape& src_strides, const Shape& dst_extent,
                        const Shape& dst_strides, const Shape& diff_src_strides,
                        std::optional<PoolImpl> impl)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.desc = desc;
  s.src_extent = src_extent;
  s.dst_extent = dst_extent;
  s.src_strides = src_strides;
  s.dst_strides = dst_strides;
  s.diff_src_strides =
      diff_src_strides.ndims() == 0 ? src_strides : diff_src_strides;
  require(desc.dst_shape(src_extent) == dst_extent, ErrorKind::kShapeMismatch,
          "local pooling of ", src_extent, " gives ",
          desc.dst_shape(src_extent), ", not ", dst_extent);
  // The list from the implementation asked for (the heuristic's).
  const auto skip = [&](const std::string& why) {
    s.why_not += (s.why_not.empty() ? "" : "; ") + why;
  };
  const std::vector<PoolImpl> list = pool_impl_list();
  auto first = std::find(list.begin(), list.end(),
                         impl.value_or(heuristic_pool_impl(desc)));
  for (auto it = first; it != list.end(); ++it) {
    s.impl = *it;
    if (*it == PoolImpl::kReference) break;
    const std::string excluded = pool_impl_excluded<T>(*it);
    if (!excluded.empty()) {
      skip(excluded);
      continue;
    }
    if constexpr (std::is_same_v<Compute<T>, float>) {
      try {
        onednn::PoolOptions o;
        if (*it == PoolImpl::kSlabs) o.slab_bytes = kSlabBytes;
        s.onednn.emplace(desc, src_extent, dst_extent, o);
        break;
      } catch (const Error& e) {
        skip(std::string(to_string(*it)) + ": " + e.what());
      }
    }
  }
  if (s.onednn) {
    // bf16 runs staged, on fp32 copies.
    s.in_place =
        std::is_same_v<T, float> &&
        is_dense(src_extent, src_strides, StorageOrder::kChannelsLast) &&
        is_dense(dst_extent, dst_strides, StorageOrder::kChannelsLast) &&
        is_dense(src_extent, s.diff_src_strides, StorageOrder::kChannelsLast);
  }
  if (s.onednn && !s.in_place) {
    s.src_copy.resize(src_extent.volume());
    s.dst_copy.resize(dst_extent.volume());
  }
}

template <typename T>
LocalPool<T>::~LocalPool() = default;
template <typename T>
LocalPool<T>::LocalPool(LocalPool&&) noexcept = default;
template <typename T>
LocalPool<T>& LocalPool<T>::operator=(LocalPool&&) noexcept = default;

template <typename T>
PoolImpl LocalPool<T>::impl() const {
  return impl_->impl;
}

template <typename T>
std::string LocalPool<T>::implementation() const {
  const Impl& s = *impl_;
  const std::string fp32 = kNarrow<T> ? " in fp32" : "";
  const std::string why = s.why_not.empty() ? "" : " (" + s.why_not + ")";
  if (!s.onednn) return "reference, staged" + fp32 + why;
  return std::string(to_string(s.impl)) + ": " + s.onednn->implementation() +
         (s.in_place ? ", in place" : ", staged" + fp32) + why;
}

template <typename T>
void LocalPool<T>::forward(StridedView<const T> src, StridedView<T> dst) const {
  const Impl& s = *impl_;
  s.check(src, dst, s.src_strides);
  if (dst.size() == 0) return;
  using P = Compute<T>;
  if constexpr (std::is_same_v<P, float>) {
    if (s.onednn) {
      const P* x = nullptr;  // oneDNN's dense input
      if constexpr (std::is_same_v<T, P>) {
        if (s.in_place) x = src.data();
      }
      if (!s.in_place) {
        const StridedView<P> in =
            Impl::staged(s.src_copy, s.src_extent, StorageOrder::kChannelsLast);
        copy_view<T>(src, in);
        x = in.data();
      }
      // oneDNN's max skips NaNs (a window holding one must give NaN) and
      // gives -3.4e38 for a window of -Inf: each slab's input is looked
      // at right before oneDNN reads it.
      const onednn::PoolSlabCheck check =
          s.desc.kind == PoolKind::kMax ? any_nan_or_minus_inf : nullptr;
      auto out = [&] {
        return Impl::staged(s.dst_copy, s.dst_extent,
                            StorageOrder::kChannelsLast);
      };
      P* y = nullptr;
      if constexpr (std::is_same_v<T, P>) {
        if (s.in_place) y = dst.data();
      }
      const bool staged_dst = y == nullptr;
      if (staged_dst) y = out().data();
      s.special_seen = !s.onednn->forward(x, y, check);
      if (!s.special_seen) {
        if (staged_dst) copy_view<P>(out(), dst);
        return;
      }
    }
  }
  s.reference_forward(src, dst);
}

template <typename T>
void LocalPool<T>::backward(StridedView<const T> src,
                            StridedView<const T> diff_dst,
                            StridedView<T> diff_src) const {
  const Impl& s = *impl_;
  s.check(src, diff_dst, s.src_strides);
  s.check(diff_src, diff_dst, s.diff_src_strides);
  if (diff_src.size() == 0) return;
  using P = Compute<T>;
  if constexpr (std::is_same_v<P, float>) {
    if (s.onednn && !s.special_seen) {
      if constexpr (std::is_same_v<T, P>) {
        if (s.in_place) {
          return s.onednn->backward(diff_dst.data(), diff_src.data());
        }
      }
      const StridedView<P> dd =
          Impl::staged(s.dst_copy, s.dst_extent, StorageOrder::kChannelsLast);
      const StridedView<P> ds =
          Impl::staged(s.src_copy, s.src_extent, StorageOrder::kChannelsLast);
      copy_view<T>(diff_dst, dd);
      s.onednn->backward(dd.data(), ds.data());
      return copy_view<P>(ds, diff_src);
    }
  }
  s.reference_backward(src, diff_dst, diff_src);
}

#define DISTCONV_INSTANTIATE(T) template class LocalPool<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
