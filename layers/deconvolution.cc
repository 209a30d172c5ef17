#include "layers/deconvolution.h"

#include <algorithm>
#include <array>
#include <optional>
#include <sstream>
#include <utility>

#include "distconv/error.h"
#include "halo/halo_exchange.h"
#include "layers/internal/channel_cells.h"
#include "layers/internal/gradient_sum.h"
#include "distconv/internal/layer_checks.h"
#include "kernels/local_conv.h"

namespace distconv {
namespace {

using internal::for_each_cell;

ConvGeometry checked_geometry(const DeconvDesc& d, const Distribution& src) {
  const Shape dst = d.dst_shape(src.global_shape());  // validates
  return ConvGeometry(d.adjoint(), dst);
}

}  // namespace

template <typename T>
struct Deconvolution<T>::Impl {
  const ProcessGrid* grid;
  DeconvDesc desc;
  ConvGeometry geometry;  // the adjoint convolution: dst -> src
  Distribution dst;
  HaloLayout src_layout, dst_layout;
  HaloExchange<T> halo;  // on dst (reverse) and diff_dst (forward)
  ConvWindow window;     // this rank's: src shard = window.dst
  Box in_local;          // window.dst in src's buffer
  Box out_local;         // window.src in dst's buffer
  // Forward zeroes dst's buffer first unless the kernel overwrites it all.
  bool zero_first = true;
  // The adjoint convolution's passes on the window; none when the window
  // reads padding only (or is empty).
  std::optional<LocalConv<T>> forward_kernel;  // its backward-data
  std::optional<LocalConv<T>> data_kernel;     // its forward
  std::optional<LocalConv<T>> weights_kernel;  // its backward-weights
  internal::GradientSum<T> grads;              // weights, then bias
  DeconvStats stats;

  Impl(const ProcessGrid& g, const DeconvDesc& d, const Distribution& src,
       const DeconvolutionOptions& o)
      : grid(&g),
        desc(d),
        geometry(checked_geometry(d, src)),
        dst(geometry.src_distribution(src)),
        src_layout(HaloLayout(src).with_storage(StorageOrder::kChannelsLast)),
        dst_layout(chosen_layout(
            o.dst_layout,
            geometry.src_layout(dst, src, StorageOrder::kChannelsLast), "dst")),
        halo(g, dst_layout, o.halo),
        grads(g.comm(), d.weights_shape().volume(),
              d.bias == ConvBias::kAdd ? d.out_channels : 0) {
    const int rank = g.rank();
    window = geometry.forward_window(src_layout.shard(rank));
    in_local = window.dst.shifted(-src_layout.buffer_box(rank).lower);
    out_local = window.src.shifted(-dst_layout.buffer_box(rank).lower);
    if (window.dst.empty() || window.src.empty()) return;
    ConvDesc local = geometry.desc();
    local.padding_lower = window.padding_lower;
    local.padding_upper = window.padding_upper;
    const Shape& out_strides = dst_layout.local_strides(rank);
    const Shape& in_strides = src_layout.local_strides(rank);
    auto make = [&](std::optional<LocalConv<T>>& k, ConvPass pass) {
      k.emplace(local, window.src.extent, out_strides, window.dst.extent,
                in_strides, pass);
    };
    make(forward_kernel, ConvPass::kBackwardData);
    make(data_kernel, ConvPass::kForward);
    make(weights_kernel, ConvPass::kBackwardWeights);
    zero_first = window.src != dst_layout.buffer_box(rank);
  }

  void check_layout(const DistTensor<T>& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what,
                                "transposed convolution");
  }
};

template <typename T>
Deconvolution<T>::Deconvolution(const ProcessGrid& grid, const DeconvDesc& desc,
                                const Distribution& src,
                                const DeconvolutionOptions& options) {
  internal::check_grid(src, grid.shape(), "input");
  internal::check_unsplit_channels(src.grid_shape(),
                                   "the transposed convolution");
  impl_ = internal::Pimpl<Impl>::make(
      "transposed convolution", grid, desc, src, options);
}

template <typename T>
const DeconvDesc& Deconvolution<T>::desc() const {
  return impl().desc;
}
template <typename T>
const ConvGeometry& Deconvolution<T>::geometry() const {
  return impl().geometry;
}
template <typename T>
const HaloLayout& Deconvolution<T>::src_layout() const {
  return impl().src_layout;
}
template <typename T>
const HaloLayout& Deconvolution<T>::dst_layout() const {
  return impl().dst_layout;
}
template <typename T>
const HaloLayout& Deconvolution<T>::diff_dst_layout() const {
  return impl().dst_layout;
}
template <typename T>
const HaloLayout& Deconvolution<T>::diff_src_layout() const {
  return impl().src_layout;
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
void Deconvolution<T>::forward(const DistTensor<T>& src, const T* weights,
                               const T* bias, DistTensor<T>& dst) {
  Impl& s = impl();
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(dst, s.dst_layout, "dst");
  require(weights != nullptr, ErrorKind::kInvalidArgument, "weights are null");
  const bool has_bias = s.desc.bias == ConvBias::kAdd;
  require(bias != nullptr || !has_bias, ErrorKind::kInvalidArgument,
          "the transposed convolution adds a bias but bias is null");
  if (s.zero_first) {
    for_each_cell(dst.buffer(), [](T* v, Index channels, Index stride) {
      for (Index c = 0; c < channels; ++c) v[c * stride] = T(0);
    });
  }
  if (s.forward_kernel) {
    s.forward_kernel->backward_data(src.buffer().subview(s.in_local), weights,
                                    dst.view(s.out_local));
  }
  s.stats.halo_wait_s +=
      s.halo.exchange(dst, {HaloDirection::kReverse, HaloReduction::kSum});
  if (has_bias) {
    internal::add_per_channel(dst.interior(), bias);
  }
}

template <typename T>
void Deconvolution<T>::backward_data(DistTensor<T>& diff_dst, const T* weights,
                                     DistTensor<T>& diff_src) {
  Impl& s = impl();
  s.check_layout(diff_dst, s.dst_layout, "diff_dst");
  s.check_layout(diff_src, s.src_layout, "diff_src");
  require(weights != nullptr, ErrorKind::kInvalidArgument, "weights are null");
  s.stats.halo_wait_s += s.halo.exchange(diff_dst, {});
  s.grads.poke();
  const StridedView<T> out = diff_src.view(s.in_local);
  if (s.data_kernel) {
    s.data_kernel->forward(diff_dst.view(s.out_local), weights, nullptr, out);
  } else {  // the inputs reach padding only (or there are none)
    out.for_each([](const Shape&, T& v) { v = T(0); });
  }
}

template <typename T>
void Deconvolution<T>::backward_weights(const DistTensor<T>& src,
                                        DistTensor<T>& diff_dst,
                                        T* diff_weights, T* diff_bias) {
  Impl& s = impl();
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(diff_dst, s.dst_layout, "diff_dst");
  require(diff_weights != nullptr, ErrorKind::kInvalidArgument,
          "diff_weights is null");
  require(diff_bias != nullptr || s.desc.bias == ConvBias::kNone,
          ErrorKind::kInvalidArgument,
          "the transposed convolution adds a bias but diff_bias is null");
  s.grads.zero();
  s.stats.halo_wait_s += s.halo.exchange(diff_dst, {});
  if (s.weights_kernel) {
    s.weights_kernel->backward_weights(diff_dst.buffer().subview(s.out_local),
                                       src.buffer().subview(s.in_local),
                                       s.grads.weights(), nullptr);
  }
  if (T* db = s.grads.bias()) {
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
  std::ostringstream out;
  out << "transposed convolution " << s.window.dst << " -> " << s.window.src
      << ": ";
  if (!s.forward_kernel) {
    out << "no kernel (nothing to compute here)\n";
    return out.str();
  }
  out << "forward " << s.forward_kernel->implementation() << "; backward-data "
      << s.data_kernel->implementation() << "; backward-weights "
      << s.weights_kernel->implementation() << "\n";
  return out.str();
}

template class Deconvolution<float>;
template class Deconvolution<double>;

}  // namespace distconv
