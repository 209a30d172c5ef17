#include "kernels/local_conv.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>

#include "distconv/conv_geometry.h"
#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "kernels/copy_view.h"
#include "kernels/onednn/conv.h"
#include "kernels/reference/conv.h"

namespace distconv {
namespace {

enum class Mode { kInPlace, kPerSample, kStaged };

// What slabs run on: fp32 copies of the 16-bit views, or the fp32 views
// themselves (dense channels-last: a slab of them is one dense array).
enum class SlabData { kStagedInFp32, kOnTheViews };

// Whether `box` of a dense channels-last array of `extent` is one dense
// array itself: every channel and every cell of the spatial dimensions
// after the first, and all of the first where it spans several samples.
bool contiguous(const Box& box, const Shape& extent) {
  for (int j = 1; j < extent.ndims(); ++j) {
    if (j == 2 && box.extent[0] == 1) continue;
    if (box.lower[j] != 0 || box.extent[j] != extent[j]) return false;
  }
  return true;
}

bool dense_from(const Shape& extent, const Shape& strides, int from) {
  return is_dense(extent, strides, StorageOrder::kChannelsLast, from);
}

// Where sample n of a view starts.
template <typename T>
T* at(const StridedView<T>& v, Index n) {
  return v.data() + n * v.strides()[0];
}

Shape with_batch(Shape s, Index n) {
  s[0] = n;
  return s;
}

// The oneDNN element type of views of T.
template <typename T>
constexpr onednn::ConvData data_of() {
  if constexpr (std::is_same_v<T, bf16>) return onednn::ConvData::kBf16;
  if constexpr (std::is_same_v<T, fp16>) return onednn::ConvData::kF16;
  return onednn::ConvData::kF32;
}

// One slab of a piece run in slabs (a 16-bit piece staged in fp32, or an
// fp32 piece on blocked copies): `window` is the local
// convolution of the slab (forward and backward-weights: a range of
// output rows and the inputs they read; backward-data: a range of input
// rows and the outputs that reach them), run by slab_kernels[kernel].
struct Slab {
  ConvWindow window;
  int kernel;
};

// A oneDNN kernel for the slabs of one shape: `shape` is the first such
// slab's window.
struct SlabKernel {
  ConvWindow shape;
  onednn::Conv conv;

  bool runs(const ConvWindow& w) const {
    return shape.src.extent == w.src.extent &&
           shape.dst.extent == w.dst.extent &&
           shape.padding_lower == w.padding_lower &&
           shape.padding_upper == w.padding_upper;
  }
};

// The fp32 copies of one slab's activations (in and out) aim at this many
// times the core's L2 cache: whole samples while one fits, else rows (or
// planes) of the first spatial dimension of one sample.
constexpr Index kSlabCacheMultiple = 2;

Index l2_cache_bytes() {
  const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return bytes > 0 ? bytes : Index{1} << 20;
}

}  // namespace

template <typename T>
struct LocalConv<T>::Impl {
  using P = Compute<T>;  // what the dense kernels run on
  ConvDesc desc;
  ConvPass pass;
  Shape src_extent, dst_extent;
  Mode mode = Mode::kStaged;
  StorageOrder scratch_order = StorageOrder::kChannelsLast;
  ConvImpl requested = ConvImpl::kChannelsLast, impl = ConvImpl::kReference;
  bool native = false;  // kNative16: oneDNN on the 16-bit views
  // The whole piece's oneDNN kernel; none where the reference loops run
  // or where the piece is staged in slabs (slab_kernels run).
  std::optional<onednn::Conv> onednn;
  std::string why_not;        // why `requested` does not run
  std::string why_reference;  // why channels-last does not run
  mutable std::vector<P> src_scratch, dst_scratch, dw_scratch, db_scratch;
  // 16-bit views staged to fp32 a slab at a time (empty: the whole views
  // at once), and one oneDNN kernel per distinct slab shape.
  std::vector<Slab> slabs;
  std::vector<SlabKernel> slab_kernels;

  StridedView<P> scratch_view(std::vector<P>& v, const Shape& extent) const {
    return StridedView<P>(v.data(), extent,
                          dense_strides(extent, scratch_order));
  }
  Index weights_size() const { return desc.weights_shape().volume(); }
  // How many kernel calls a view takes: one per sample, or one.
  template <typename View>
  Index calls(const View& v) const {
    return mode == Mode::kPerSample ? v.extent()[0] : 1;
  }

  // The whole piece's oneDNN kernel (none: the reference loops).
  const onednn::Conv* whole() const { return onednn ? &*onednn : nullptr; }
  // Whether oneDNN runs (on the whole piece or in slabs), and its kernel's
  // name.
  bool on_onednn() const { return onednn || !slab_kernels.empty(); }
  std::string onednn_name() const {
    return onednn ? onednn->implementation()
                  : slab_kernels.front().conv.implementation();
  }
  P* db_out() const {
    return desc.bias == ConvBias::kAdd ? db_scratch.data() : nullptr;
  }

  // The kernels on dense arrays: `kernel` (a slab's or the whole piece's,
  // on channels-last arrays), or with none the reference loops on the
  // whole piece (NCHW); backward-weights into the scratch gradients.
  void dense_forward(const onednn::Conv* kernel, const P* src, const P* w,
                     const P* b, P* dst) const {
    if constexpr (std::is_same_v<P, float>) {
      if (kernel) return kernel->forward(src, w, b, dst);
    }
    reference::conv_fwd(desc, src_extent, src, w, b, dst_extent, dst);
  }
  void dense_backward_data(const onednn::Conv* kernel, const P* diff_dst,
                           const P* w, P* diff_src) const {
    if constexpr (std::is_same_v<P, float>) {
      if (kernel) return kernel->backward_data(diff_dst, w, diff_src);
    }
    reference::conv_bwd_data(desc, dst_extent, diff_dst, w, src_extent,
                             diff_src);
  }
  void dense_backward_weights(const onednn::Conv* kernel, const P* src,
                              const P* diff_dst) const {
    P* dw = dw_scratch.data();
    if constexpr (std::is_same_v<P, float>) {
      if (kernel) {
        return kernel->backward_weights(src, diff_dst, dw, db_out());
      }
    }
    reference::conv_bwd_weights(desc, src_extent, src, dst_extent, diff_dst, dw,
                                db_out());
  }

  // What a staged pass copies in, computes and copies out: fn(src box,
  // dst box, kernel) for each slab, or once for the whole piece.
  template <typename Fn>
  void each_staged(Fn fn) const {
    for (const Slab& slab : slabs) {
      fn(slab.window.src, slab.window.dst, &slab_kernels[slab.kernel].conv);
    }
    if (!slabs.empty()) return;
    fn(Box{Shape::filled(src_extent.ndims(), 0), src_extent},
       Box{Shape::filled(dst_extent.ndims(), 0), dst_extent}, whole());
  }

  // Splits the pass's rows (forward, backward-weights: the output's;
  // backward-data: the input's; the first spatial dimension) into slabs
  // whose fp32 copies fit a share of the L2 cache, each with a oneDNN
  // kernel of `impl` for its shape, and with kStagedInFp32 sizes the
  // scratch to the largest slab (kOnTheViews: the slabs run on the views
  // themselves, whole samples only where they are dense together). Plans
  // none, and says false (the whole piece in one call), where one slab
  // would hold them, where the padding is circular, where a slab's window
  // is not the whole slab (inputs no output reads), or where oneDNN
  // cannot run a slab's shape with `impl`.
  bool plan_slabs(ConvImpl impl, SlabData data) {
    if (src_extent.ndims() < 3 || any_circular(desc.padding_mode)) {
      return false;
    }
    const bool by_src = pass == ConvPass::kBackwardData;
    const Shape& split = by_src ? src_extent : dst_extent;
    const Index samples = split[0], rows = split[2];
    const Index bytes = static_cast<Index>(sizeof(float)) *
                        (src_extent.volume() + dst_extent.volume());
    const Index target = l2_cache_bytes() * kSlabCacheMultiple;
    if (bytes <= target || samples == 0 || rows == 0) return false;
    // Whole samples while one fits, else rows of one sample.
    const Index per_sample = bytes / samples;
    const Index sample_step =
        data == SlabData::kOnTheViews && mode == Mode::kPerSample
            ? 1
            : std::max<Index>(1, target / per_sample);
    const Index row_step =
        sample_step > 1
            ? rows
            : std::max<Index>(1,
                              target / std::max<Index>(1, per_sample / rows));
    const ConvGeometry geometry(desc, src_extent);
    std::vector<Slab> planned;
    std::vector<SlabKernel> kernels;
    Index src_size = 0, dst_size = 0;
    for (Index n = 0; n < samples; n += sample_step) {
      for (Index lo = 0; lo < rows; lo += row_step) {
        Box box{Shape::filled(split.ndims(), 0), split};
        box.lower[0] = n;
        box.extent[0] = std::min(sample_step, samples - n);
        box.lower[2] = lo;
        box.extent[2] = std::min(row_step, rows - lo);
        const ConvWindow w = by_src ? geometry.backward_data_window(box)
                                    : geometry.forward_window(box);
        if (w.src.empty() || w.dst.empty() || (by_src ? w.src : w.dst) != box) {
          return false;
        }
        if (data == SlabData::kOnTheViews &&
            !(contiguous(w.src, src_extent) && contiguous(w.dst, dst_extent))) {
          return false;  // a window trimmed in a dimension a slab keeps
        }
        std::size_t k = 0;
        while (k < kernels.size() && !kernels[k].runs(w)) ++k;
        if (k == kernels.size()) {
          ConvDesc d = desc;
          d.padding_lower = w.padding_lower;
          d.padding_upper = w.padding_upper;
          try {
            kernels.push_back(
                {w, onednn::Conv(d, w.src.extent, w.dst.extent, pass, impl)});
          } catch (const Error&) {
            return false;
          }
        }
        planned.push_back({w, static_cast<int>(k)});
        src_size = std::max(src_size, w.src.volume());
        dst_size = std::max(dst_size, w.dst.volume());
      }
    }
    slabs = std::move(planned);
    slab_kernels = std::move(kernels);
    if (data == SlabData::kStagedInFp32) {
      src_scratch.resize(src_size);
      dst_scratch.resize(dst_size);
    }
    return true;
  }

  // Adds the scratch weight / bias gradients into the caller's. (The size
  // is read once: weights_size() builds a Shape, which in the loop's
  // condition cost 20x the kernel on large weights. Vectorised: the
  // scalar loop took 5x oneDNN's inner product on a dense layer's 1 MB of
  // weights, 4x64->64 4³.)
  void add_gradients(P* dw, P* db) const {
    const Index n = weights_size();
    const P* from = dw_scratch.data();
#pragma omp simd
    for (Index i = 0; i < n; ++i) dw[i] += from[i];
    if (desc.bias == ConvBias::kAdd) {
      for (Index i = 0; i < desc.out_channels; ++i) db[i] += db_scratch[i];
    }
  }
};

template <typename T>
LocalConv<T>::LocalConv(const ConvDesc& desc, const Shape& src_extent,
                        const Shape& src_strides, const Shape& dst_extent,
                        const Shape& dst_strides, ConvPass pass)
    : LocalConv(desc, src_extent, src_strides, dst_extent, dst_strides, pass,
                heuristic_conv_impl(desc, pass, src_extent, dst_extent)) {}

template <typename T>
LocalConv<T>::LocalConv(const ConvDesc& desc, const Shape& src_extent,
                        const Shape& src_strides, const Shape& dst_extent,
                        const Shape& dst_strides, ConvPass pass, ConvImpl impl)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.desc = desc;
  s.pass = pass;
  s.src_extent = src_extent;
  s.dst_extent = dst_extent;
  s.requested = impl;
  require(desc.dst_shape(src_extent) == dst_extent, ErrorKind::kShapeMismatch,
          "local convolution of ", src_extent, " gives ",
          desc.dst_shape(src_extent), ", not ", dst_extent);
  // The one asked for, then channels-last, then blocked copies (where
  // oneDNN refuses channels-last, or a known fault of its kernel rules it
  // out: kernels/onednn/conv.cc), then the reference loops.
  std::vector<ConvImpl> tries = {impl};
  for (ConvImpl next : {ConvImpl::kChannelsLast, ConvImpl::kBlocked16,
                        ConvImpl::kBlocked8, ConvImpl::kReference}) {
    if (tries.back() != ConvImpl::kReference &&
        std::find(tries.begin(), tries.end(), next) == tries.end()) {
      tries.push_back(next);
    }
  }
  for (ConvImpl t : tries) {
    std::string why;
    if (t == ConvImpl::kReference) {
      s.mode = Mode::kStaged;
      s.impl = t;
    } else if constexpr (std::is_same_v<Compute<T>, float>) {
      // 16-bit views are staged (the kernels run on fp32 copies) but with
      // oneDNN's own 16-bit kernels.
      const bool native = t == ConvImpl::kNative16;
      const bool direct = std::is_same_v<T, float> || native;
      const bool whole = direct && dense_from(src_extent, src_strides, 0) &&
                         dense_from(dst_extent, dst_strides, 0);
      const bool each = direct && dense_from(src_extent, src_strides, 1) &&
                        dense_from(dst_extent, dst_strides, 1);
      s.mode = whole ? Mode::kInPlace : each ? Mode::kPerSample : Mode::kStaged;
      const Index n = s.mode == Mode::kPerSample ? 1 : src_extent[0];
      if (native && s.mode == Mode::kStaged) {
        why = "oneDNN's 16-bit kernels run on dense views only";
      } else {
        try {
          // A 16-bit piece on fp32 copies is staged in slabs where they
          // would not fit the cache (no kernel for the whole piece then).
          bool in_slabs = false;
          if constexpr (kNarrow<T>) {
            in_slabs = !native && s.mode == Mode::kStaged &&
                       s.plan_slabs(t, SlabData::kStagedInFp32);
          } else {
            // Blocked copies of slabs held in the cache, on the views.
            in_slabs =
                (t == ConvImpl::kBlocked8 || t == ConvImpl::kBlocked16) &&
                s.mode != Mode::kStaged &&
                s.plan_slabs(t, SlabData::kOnTheViews);
          }
          if (!in_slabs) {
            s.onednn.emplace(desc, with_batch(src_extent, n),
                             with_batch(dst_extent, n), pass, t,
                             native ? data_of<T>() : onednn::ConvData::kF32);
          }
          s.impl = t;
          s.native = native;
        } catch (const Error& e) {
          why = e.what();
        }
      }
    } else {
      why = "oneDNN has no fp64 convolution";
    }
    if (t == impl) s.why_not = why;
    if (why.empty()) break;
    if (t == ConvImpl::kChannelsLast) s.why_reference = why;
  }
  // oneDNN runs on channels-last scratch, the reference loops on NCHW.
  s.scratch_order = s.on_onednn() ? StorageOrder::kChannelsLast
                                  : StorageOrder::kChannelsFirst;
  if (s.mode == Mode::kStaged && s.slabs.empty()) {
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
  // Where channels-last was tried after the one asked for, its reason too.
  const bool twice = !s.why_reference.empty() && s.why_reference != s.why_not;
  const std::string fell_back =
      s.impl == s.requested
          ? ""
          : std::string(" (") + to_string(s.requested) +
                " does not apply: " + s.why_not +
                (twice ? "; channels_last: " + s.why_reference : "") + ")";
  if (!s.on_onednn()) {
    return std::string("reference, staged") + (kNarrow<T> ? " in fp32" : "") +
           fell_back;
  }
  const char* how[] = {"in place", "per sample", "staged"};
  const std::string slabs =
      s.slabs.empty() ? "" : " in " + std::to_string(s.slabs.size()) + " slabs";
  const char* converted = kNarrow<T> && !s.native ? " in fp32" : "";
  return s.onednn_name() + ", " + how[static_cast<int>(s.mode)] + slabs +
         converted + fell_back;
}

template <typename T>
Index LocalConv<T>::held_bytes() const {
  const Impl& s = *impl_;
  Index bytes = static_cast<Index>(
      sizeof(Compute<T>) * (s.src_scratch.size() + s.dst_scratch.size() +
                            s.dw_scratch.size() + s.db_scratch.size()));
  if (s.onednn) bytes += s.onednn->held_bytes();
  for (const SlabKernel& k : s.slab_kernels) bytes += k.conv.held_bytes();
  return bytes;
}

template <typename T>
ConvImpl LocalConv<T>::requested() const {
  return impl_->requested;
}

template <typename T>
ConvImpl LocalConv<T>::impl() const {
  return impl_->impl;
}

template <typename T>
const std::string& LocalConv<T>::why_not() const {
  return impl_->why_not;
}

template <typename T>
void LocalConv<T>::forward(StridedView<const T> src, const Param* weights,
                           const Param* bias, StridedView<T> dst) const {
  const Impl& s = *impl_;
  if (dst.size() == 0) return;
  if constexpr (kNarrow<T>) {
    if (s.native) {
      for (Index n = 0; n < s.calls(src); ++n) {
        s.onednn->forward(at(src, n), weights, bias, at(dst, n));
      }
      return;
    }
  }
  if constexpr (std::is_same_v<T, Param>) {
    if (s.mode != Mode::kStaged) {
      for (const Slab& slab : s.slabs) {
        s.dense_forward(&s.slab_kernels[slab.kernel].conv,
                        src.subview(slab.window.src).data(), weights, bias,
                        dst.subview(slab.window.dst).data());
      }
      for (Index n = 0; s.slabs.empty() && n < s.calls(src); ++n) {
        s.dense_forward(s.whole(), at(src, n), weights, bias, at(dst, n));
      }
      return;
    }
  }
  s.each_staged([&](const Box& from, const Box& to,
                    const onednn::Conv* kernel) {
    const StridedView<Param> in = s.scratch_view(s.src_scratch, from.extent);
    const StridedView<Param> out = s.scratch_view(s.dst_scratch, to.extent);
    copy_view<T>(src.subview(from), in);
    s.dense_forward(kernel, in.data(), weights, bias, out.data());
    copy_view<Param>(out, dst.subview(to));
  });
}

template <typename T>
void LocalConv<T>::backward_data(StridedView<const T> diff_dst,
                                 const Param* weights,
                                 StridedView<T> diff_src) const {
  const Impl& s = *impl_;
  if (diff_src.size() == 0) return;
  if constexpr (kNarrow<T>) {
    if (s.native) {
      for (Index n = 0; n < s.calls(diff_src); ++n) {
        s.onednn->backward_data(at(diff_dst, n), weights, at(diff_src, n));
      }
      return;
    }
  }
  if constexpr (std::is_same_v<T, Param>) {
    if (s.mode != Mode::kStaged) {
      for (const Slab& slab : s.slabs) {
        s.dense_backward_data(&s.slab_kernels[slab.kernel].conv,
                              diff_dst.subview(slab.window.dst).data(), weights,
                              diff_src.subview(slab.window.src).data());
      }
      for (Index n = 0; s.slabs.empty() && n < s.calls(diff_src); ++n) {
        s.dense_backward_data(s.whole(), at(diff_dst, n), weights,
                              at(diff_src, n));
      }
      return;
    }
  }
  s.each_staged([&](const Box& to, const Box& from,
                    const onednn::Conv* kernel) {
    const StridedView<Param> dd = s.scratch_view(s.dst_scratch, from.extent);
    const StridedView<Param> ds = s.scratch_view(s.src_scratch, to.extent);
    copy_view<T>(diff_dst.subview(from), dd);
    s.dense_backward_data(kernel, dd.data(), weights, ds.data());
    copy_view<Param>(ds, diff_src.subview(to));
  });
}

template <typename T>
void LocalConv<T>::backward_weights(StridedView<const T> src,
                                    StridedView<const T> diff_dst,
                                    Param* diff_weights,
                                    Param* diff_bias) const {
  const Impl& s = *impl_;
  if (diff_dst.size() == 0) return;
  if constexpr (kNarrow<T>) {
    if (s.native) {
      for (Index n = 0; n < s.calls(src); ++n) {
        s.onednn->backward_weights(at(src, n), at(diff_dst, n),
                                   s.dw_scratch.data(), s.db_out());
        s.add_gradients(diff_weights, diff_bias);
      }
      return;
    }
  }
  if constexpr (std::is_same_v<T, Param>) {
    if (s.mode != Mode::kStaged) {
      for (const Slab& slab : s.slabs) {
        s.dense_backward_weights(&s.slab_kernels[slab.kernel].conv,
                                 src.subview(slab.window.src).data(),
                                 diff_dst.subview(slab.window.dst).data());
        s.add_gradients(diff_weights, diff_bias);
      }
      for (Index n = 0; s.slabs.empty() && n < s.calls(src); ++n) {
        s.dense_backward_weights(s.whole(), at(src, n), at(diff_dst, n));
        s.add_gradients(diff_weights, diff_bias);
      }
      return;
    }
  }
  s.each_staged([&](const Box& from, const Box& to,
                    const onednn::Conv* kernel) {
    const StridedView<Param> in = s.scratch_view(s.src_scratch, from.extent);
    const StridedView<Param> dd = s.scratch_view(s.dst_scratch, to.extent);
    copy_view<T>(src.subview(from), in);
    copy_view<T>(diff_dst.subview(to), dd);
    s.dense_backward_weights(kernel, in.data(), dd.data());
    s.add_gradients(diff_weights, diff_bias);
  });
}

template <typename T>
ConvImpl heuristic_local_conv_impl(const ConvDesc& desc,
                                   const Shape& src_extent,
                                   const Shape& src_strides,
                                   const Shape& dst_extent,
                                   const Shape& dst_strides, ConvPass pass,
                                   ConvImpl planned) {
  if constexpr (kNarrow<T>) {
    if (planned == ConvImpl::kInnerProduct) return planned;
    const LocalConv<T> native(desc, src_extent, src_strides, dst_extent,
                              dst_strides, pass, ConvImpl::kNative16);
    if (native.impl() == ConvImpl::kNative16 &&
        heuristic_takes_native16(native.implementation(), this_cpu_vendor())) {
      return ConvImpl::kNative16;
    }
  }
  return planned;
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template class LocalConv<T>;                                                 \
  template ConvImpl heuristic_local_conv_impl<T>(                              \
      const ConvDesc&, const Shape&, const Shape&, const Shape&, const Shape&, \
      ConvPass, ConvImpl);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
