#include "kernels/local_conv.h"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>

#include "distconv/error.h"
#include "kernels/onednn/conv.h"
#include "kernels/reference/conv.h"

namespace distconv {
namespace {

enum class Mode { kInPlace, kPerSample, kStaged };

// Strides of a dense array of `extent` stored channels-last (N, spatial...,
// C) or channels-first (N, C, spatial...), in logical order.
Shape dense_strides(const Shape& extent, bool channels_last) {
  if (!channels_last) return row_major_strides(extent);
  const int n = extent.ndims();
  Shape s = Shape::filled(n, 0);
  Index step = 1;
  s[1] = step;
  step *= extent[1];
  for (int d = n - 1; d >= 2; --d) {
    s[d] = step;
    step *= extent[d];
  }
  s[0] = step;
  return s;
}

// Whether a view with these strides is a dense channels-last array, from
// dimension `from` on (1: each sample; 0: the whole batch). Dimensions of
// extent 1 may have any stride.
bool dense_from(const Shape& extent, const Shape& strides, int from) {
  const Shape want = dense_strides(extent, true);
  for (int d = from; d < extent.ndims(); ++d) {
    if (extent[d] > 1 && strides[d] != want[d]) return false;
  }
  return true;
}

Shape with_batch(Shape s, Index n) {
  s[0] = n;
  return s;
}

}  // namespace

template <typename T>
void copy_view(StridedView<const T> from, StridedView<T> to) {
  require(from.extent() == to.extent(), ErrorKind::kShapeMismatch,
          "copy between views of extent ", from.extent(), " and ",
          to.extent());
  const int n = from.ndims();
  if (from.size() == 0) return;
  // Innermost loop over the dimension `from` steps through fastest.
  int inner = n - 1;
  for (int d = 0; d < n; ++d) {
    if (from.extent()[d] > 1 && from.strides()[d] == 1) inner = d;
  }
  const Index len = from.extent()[inner];
  const Index fs = from.strides()[inner], ts = to.strides()[inner];
  Shape i = Shape::filled(n, 0);
  while (true) {
    const T* a = &from(i);
    T* b = &to(i);
    for (Index k = 0; k < len; ++k) b[k * ts] = a[k * fs];
    int d = n - 1;
    for (; d >= 0; --d) {
      if (d == inner) continue;
      if (++i[d] < from.extent()[d]) break;
      i[d] = 0;
    }
    if (d < 0) return;
  }
}

template <typename T>
struct LocalConv<T>::Impl {
  ConvDesc desc;
  ConvPass pass;
  Shape src_extent, dst_extent;
  Mode mode = Mode::kStaged;
  bool channels_last = true;  // of the staged scratch
  std::optional<onednn::Conv> onednn;
  std::string why_reference;
  mutable std::vector<T> src_scratch, dst_scratch, dw_scratch, db_scratch;

  StridedView<T> scratch_view(std::vector<T>& v, const Shape& extent) const {
    return StridedView<T>(v.data(), extent,
                          dense_strides(extent, channels_last));
  }
  Index weights_size() const { return desc.weights_shape().volume(); }
  // Adds the scratch weight / bias gradients into the caller's.
  void add_gradients(T* dw, T* db) const {
    for (Index i = 0; i < weights_size(); ++i) dw[i] += dw_scratch[i];
    if (desc.bias == ConvBias::kAdd) {
      for (Index i = 0; i < desc.out_channels; ++i) db[i] += db_scratch[i];
    }
  }
};

template <typename T>
LocalConv<T>::LocalConv(const ConvDesc& desc, const Shape& src_extent,
                        const Shape& src_strides, const Shape& dst_extent,
                        const Shape& dst_strides, ConvPass pass)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.desc = desc;
  s.pass = pass;
  s.src_extent = src_extent;
  s.dst_extent = dst_extent;
  require(desc.dst_shape(src_extent) == dst_extent, ErrorKind::kShapeMismatch,
          "local convolution of ", src_extent, " gives ",
          desc.dst_shape(src_extent), ", not ", dst_extent);
  if constexpr (std::is_same_v<T, float>) {
    const bool whole = dense_from(src_extent, src_strides, 0) &&
                       dense_from(dst_extent, dst_strides, 0);
    const bool each = dense_from(src_extent, src_strides, 1) &&
                      dense_from(dst_extent, dst_strides, 1);
    s.mode = whole ? Mode::kInPlace : each ? Mode::kPerSample : Mode::kStaged;
    const Index n = s.mode == Mode::kPerSample ? 1 : src_extent[0];
    try {
      s.onednn.emplace(desc, with_batch(src_extent, n),
                       with_batch(dst_extent, n), pass);
    } catch (const Error& e) {
      s.why_reference = e.what();
      s.mode = Mode::kStaged;
    }
  } else {
    s.why_reference = "oneDNN has no fp64 convolution";
  }
  s.channels_last = s.onednn.has_value();
  if (s.mode == Mode::kStaged) {
    s.src_scratch.resize(src_extent.volume());
    s.dst_scratch.resize(dst_extent.volume());
  }
  if (pass == ConvPass::kBackwardWeights) {
    s.dw_scratch.resize(s.weights_size());
    s.db_scratch.resize(desc.out_channels);
  }
}

template <typename T>
LocalConv<T>::~LocalConv() = default;
template <typename T>
LocalConv<T>::LocalConv(LocalConv&&) noexcept = default;
template <typename T>
LocalConv<T>& LocalConv<T>::operator=(LocalConv&&) noexcept = default;

template <typename T>
std::string LocalConv<T>::implementation() const {
  const Impl& s = *impl_;
  if (!s.onednn) return "reference, staged (" + s.why_reference + ")";
  const char* how[] = {"in place", "per sample", "staged"};
  return s.onednn->implementation() + ", " + how[static_cast<int>(s.mode)];
}

template <typename T>
void LocalConv<T>::forward(StridedView<const T> src, const T* weights,
                           const T* bias, StridedView<T> dst) const {
  const Impl& s = *impl_;
  if (dst.size() == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (s.mode == Mode::kInPlace) {
      s.onednn->forward(src.data(), weights, bias, dst.data());
      return;
    }
    if (s.mode == Mode::kPerSample) {
      for (Index n = 0; n < src.extent()[0]; ++n) {
        s.onednn->forward(src.data() + n * src.strides()[0], weights, bias,
                          dst.data() + n * dst.strides()[0]);
      }
      return;
    }
  }
  const StridedView<T> in = s.scratch_view(s.src_scratch, s.src_extent);
  const StridedView<T> out = s.scratch_view(s.dst_scratch, s.dst_extent);
  copy_view<T>(src, in);
  if constexpr (std::is_same_v<T, float>) {
    if (s.onednn) {
      s.onednn->forward(in.data(), weights, bias, out.data());
      copy_view<T>(out, dst);
      return;
    }
  }
  reference::conv_fwd(s.desc, s.src_extent, in.data(), weights, bias,
                      s.dst_extent, out.data());
  copy_view<T>(out, dst);
}

template <typename T>
void LocalConv<T>::backward_data(StridedView<const T> diff_dst,
                                 const T* weights,
                                 StridedView<T> diff_src) const {
  const Impl& s = *impl_;
  if (diff_src.size() == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (s.mode == Mode::kInPlace) {
      s.onednn->backward_data(diff_dst.data(), weights, diff_src.data());
      return;
    }
    if (s.mode == Mode::kPerSample) {
      for (Index n = 0; n < diff_src.extent()[0]; ++n) {
        s.onednn->backward_data(diff_dst.data() + n * diff_dst.strides()[0],
                                weights,
                                diff_src.data() + n * diff_src.strides()[0]);
      }
      return;
    }
  }
  const StridedView<T> dd = s.scratch_view(s.dst_scratch, s.dst_extent);
  const StridedView<T> ds = s.scratch_view(s.src_scratch, s.src_extent);
  copy_view<T>(diff_dst, dd);
  if constexpr (std::is_same_v<T, float>) {
    if (s.onednn) {
      s.onednn->backward_data(dd.data(), weights, ds.data());
      copy_view<T>(ds, diff_src);
      return;
    }
  }
  reference::conv_bwd_data(s.desc, s.dst_extent, dd.data(), weights,
                           s.src_extent, ds.data());
  copy_view<T>(ds, diff_src);
}

template <typename T>
void LocalConv<T>::backward_weights(StridedView<const T> src,
                                    StridedView<const T> diff_dst,
                                    T* diff_weights, T* diff_bias) const {
  const Impl& s = *impl_;
  if (diff_dst.size() == 0) return;
  T* dw = s.dw_scratch.data();
  T* db = s.desc.bias == ConvBias::kAdd ? s.db_scratch.data() : nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if (s.mode == Mode::kInPlace) {
      s.onednn->backward_weights(src.data(), diff_dst.data(), dw, db);
      s.add_gradients(diff_weights, diff_bias);
      return;
    }
    if (s.mode == Mode::kPerSample) {
      for (Index n = 0; n < src.extent()[0]; ++n) {
        s.onednn->backward_weights(src.data() + n * src.strides()[0],
                                   diff_dst.data() + n * diff_dst.strides()[0],
                                   dw, db);
        s.add_gradients(diff_weights, diff_bias);
      }
      return;
    }
  }
  const StridedView<T> in = s.scratch_view(s.src_scratch, s.src_extent);
  const StridedView<T> dd = s.scratch_view(s.dst_scratch, s.dst_extent);
  copy_view<T>(src, in);
  copy_view<T>(diff_dst, dd);
  bool done = false;
  if constexpr (std::is_same_v<T, float>) {
    if (s.onednn) {
      s.onednn->backward_weights(in.data(), dd.data(), dw, db);
      done = true;
    }
  }
  if (!done) {
    reference::conv_bwd_weights(s.desc, s.src_extent, in.data(), s.dst_extent,
                                dd.data(), dw, db);
  }
  s.add_gradients(diff_weights, diff_bias);
}

template class LocalConv<float>;
template class LocalConv<double>;
template void copy_view<float>(StridedView<const float>, StridedView<float>);
template void copy_view<double>(StridedView<const double>,
                                StridedView<double>);

}  // namespace distconv
