#include "kernels/local_pool.h"

#include <optional>
#include <type_traits>
#include <vector>

#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "kernels/local_conv.h"
#include "kernels/onednn/pool.h"
#include "kernels/reference/pool.h"

namespace distconv {

template <typename T>
struct LocalPool<T>::Impl {
  PoolDesc desc;
  Shape src_extent, dst_extent, src_strides, dst_strides;
  bool in_place = false;
  std::optional<onednn::Pool> onednn;
  std::string why_reference;
  // Staged runs: dense copies (channels-last for oneDNN, NCHW for the
  // reference loops); src_copy also holds diff_src, dst_copy diff_dst.
  mutable std::vector<T> src_copy, dst_copy, ref_src;

  // The views must be those the plan was made for.
  template <typename U, typename V>
  void check(const StridedView<U>& src, const StridedView<V>& dst) const {
    require(src.extent() == src_extent && src.strides() == src_strides &&
                dst.extent() == dst_extent && dst.strides() == dst_strides,
            ErrorKind::kShapeMismatch, "local pooling planned for views ",
            src_extent, " / ", dst_extent, " with strides ", src_strides,
            " / ", dst_strides, " got ", src.extent(), " / ", dst.extent(),
            " with strides ", src.strides(), " / ", dst.strides());
  }
  StorageOrder order() const {
    return onednn ? StorageOrder::kChannelsLast : StorageOrder::kChannelsFirst;
  }
  StridedView<T> staged(std::vector<T>& v, const Shape& extent) const {
    return StridedView<T>(v.data(), extent, dense_strides(extent, order()));
  }
};

template <typename T>
LocalPool<T>::LocalPool(const PoolDesc& desc, const Shape& src_extent,
                        const Shape& src_strides, const Shape& dst_extent,
                        const Shape& dst_strides)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.desc = desc;
  s.src_extent = src_extent;
  s.dst_extent = dst_extent;
  s.src_strides = src_strides;
  s.dst_strides = dst_strides;
  require(desc.dst_shape(src_extent) == dst_extent, ErrorKind::kShapeMismatch,
          "local pooling of ", src_extent, " gives ",
          desc.dst_shape(src_extent), ", not ", dst_extent);
  if constexpr (std::is_same_v<T, float>) {
    try {
      s.onednn.emplace(desc, src_extent, dst_extent);
      s.in_place =
          is_dense(src_extent, src_strides, StorageOrder::kChannelsLast) &&
          is_dense(dst_extent, dst_strides, StorageOrder::kChannelsLast);
    } catch (const Error& e) {
      s.why_reference = e.what();
    }
  } else {
    s.why_reference = "oneDNN pooling here is fp32 only";
  }
  if (!s.in_place) {
    s.src_copy.resize(src_extent.volume());
    s.dst_copy.resize(dst_extent.volume());
  }
  if (!s.onednn && desc.kind == PoolKind::kMax) {
    s.ref_src.resize(src_extent.volume());
  }
}

template <typename T>
LocalPool<T>::~LocalPool() = default;
template <typename T>
LocalPool<T>::LocalPool(LocalPool&&) noexcept = default;
template <typename T>
LocalPool<T>& LocalPool<T>::operator=(LocalPool&&) noexcept = default;

template <typename T>
std::string LocalPool<T>::implementation() const {
  const Impl& s = *impl_;
  if (!s.onednn) return "reference, staged (" + s.why_reference + ")";
  return s.onednn->implementation() + (s.in_place ? ", in place" : ", staged");
}

template <typename T>
void LocalPool<T>::forward(StridedView<const T> src,
                           StridedView<T> dst) const {
  const Impl& s = *impl_;
  s.check(src, dst);
  if (dst.size() == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (s.in_place) return s.onednn->forward(src.data(), dst.data());
  }
  const StridedView<T> in = s.staged(s.src_copy, s.src_extent);
  const StridedView<T> out = s.staged(s.dst_copy, s.dst_extent);
  copy_view<T>(src, in);
  if constexpr (std::is_same_v<T, float>) {
    if (s.onednn) s.onednn->forward(in.data(), out.data());
  }
  if (!s.onednn) {
    reference::pool_fwd<T>(s.desc, s.src_extent, in.data(), s.dst_extent,
                           out.data());
  }
  copy_view<T>(out, dst);
}

template <typename T>
void LocalPool<T>::backward(StridedView<const T> src,
                            StridedView<const T> diff_dst,
                            StridedView<T> diff_src) const {
  const Impl& s = *impl_;
  s.check(src, diff_dst);
  s.check(diff_src, diff_dst);
  if (diff_src.size() == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (s.in_place) {
      return s.onednn->backward(diff_dst.data(), diff_src.data());
    }
  }
  const StridedView<T> dd = s.staged(s.dst_copy, s.dst_extent);
  const StridedView<T> ds = s.staged(s.src_copy, s.src_extent);
  copy_view<T>(diff_dst, dd);
  if constexpr (std::is_same_v<T, float>) {
    if (s.onednn) s.onednn->backward(dd.data(), ds.data());
  }
  if (!s.onednn) {
    const T* x = nullptr;  // the averages do not read src
    if (!s.ref_src.empty()) {
      copy_view<T>(src, s.staged(s.ref_src, s.src_extent));
      x = s.ref_src.data();
    }
    reference::pool_bwd<T>(s.desc, s.src_extent, x, s.dst_extent, dd.data(),
                           ds.data());
  }
  copy_view<T>(ds, diff_src);
}

template class LocalPool<float>;
template class LocalPool<double>;

}  // namespace distconv
