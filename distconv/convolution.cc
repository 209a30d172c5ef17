#include "distconv/convolution.h"

#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/gradient_sum.h"
#include "distconv/internal/layer_checks.h"
#include "kernels/local_conv.h"

namespace distconv {
namespace {

// One local convolution of a pass: a ConvGeometry window and its kernel,
// with the window's boxes in the local coordinates of the buffers it reads
// and writes.
template <typename T>
struct Piece {
  std::string label;
  Box box;            // global: the outputs (forward, weights) or input
                      // gradients (data) this piece computes
  ConvWindow window;  // global coordinates
  Box in_local;       // forward / weights: src; backward-data: diff_dst
  Box out_local;      // forward / weights: dst or diff_dst; data: diff_src
  Box target_local;   // backward-data: the diff_src box this piece owns
  bool zero_first = false;  // backward-data: target larger than the window
  std::optional<LocalConv<T>> kernel;  // none: nothing reads the input

  ConvDesc local_desc(const ConvDesc& desc) const {
    ConvDesc d = desc;
    d.padding_lower = window.padding_lower;
    d.padding_upper = window.padding_upper;
    return d;
  }
};

}  // namespace

template <typename T>
struct Convolution<T>::Impl {
  const ProcessGrid* grid;
  ConvolutionOptions options;
  ConvGeometry geometry;
  Distribution dst;  // lined up with the input's distribution
  HaloLayout src_layout, dst_layout, diff_dst_layout, diff_src_layout;
  HaloExchange<T> src_halo, diff_dst_halo;
  std::vector<Piece<T>> forward_early, forward_late;
  std::vector<Piece<T>> data_early, data_late;
  Piece<T> weights_piece;
  internal::GradientSum<T> grads;  // weights, then bias
  ConvStats stats;

  Impl(const ProcessGrid& g, const ConvDesc& d, const Distribution& src,
       const ConvolutionOptions& o)
      : grid(&g),
        options(o),
        geometry(d, src.global_shape()),
        dst(geometry.dst_distribution(src)),
        src_layout(chosen_layout(
            o.src_layout,
            geometry.src_layout(src, dst, StorageOrder::kChannelsLast),
            "src")),
        dst_layout(HaloLayout(dst).with_storage(StorageOrder::kChannelsLast)),
        diff_dst_layout(
            geometry.diff_dst_layout(src, dst, StorageOrder::kChannelsLast)),
        diff_src_layout(
            HaloLayout(src).with_storage(StorageOrder::kChannelsLast)),
        src_halo(g, src_layout, o.halo),
        diff_dst_halo(g, diff_dst_layout, o.halo),
        grads(g.comm(), geometry.desc().weights_shape().volume(),
              geometry.desc().bias == ConvBias::kAdd
                  ? geometry.desc().out_channels
                  : 0) {
    plan_pieces();
  }

  const ConvDesc& desc() const { return geometry.desc(); }
  int rank() const { return grid->rank(); }
  // Nothing may read halo cells early (not even to recompute them) when
  // the transport receives into the tensor while in flight.
  bool halos_written_in_flight() const {
    return receives_in_flight(options.halo.transport);
  }

  Piece<T> forward_piece(const std::string& label, const Box& dst_box,
                         const HaloLayout& out_layout, ConvPass pass) const {
    Piece<T> p;
    p.label = label;
    p.box = dst_box;
    p.window = geometry.forward_window(dst_box);
    const Shape in_origin = src_layout.buffer_box(rank()).lower;
    const Shape out_origin = out_layout.buffer_box(rank()).lower;
    p.in_local = p.window.src.shifted(-in_origin);
    p.out_local = p.window.dst.shifted(-out_origin);
    if (!p.window.dst.empty() && !p.window.src.empty()) {
      p.kernel.emplace(p.local_desc(desc()), p.window.src.extent,
                       src_layout.local_strides(rank()), p.window.dst.extent,
                       out_layout.local_strides(rank()), pass);
    }
    return p;
  }

  Piece<T> data_piece(const std::string& label, const Box& src_box) const {
    Piece<T> p;
    p.label = label;
    p.box = src_box;
    p.window = geometry.backward_data_window(src_box);
    const Shape in_origin = diff_dst_layout.buffer_box(rank()).lower;
    const Shape out_origin = diff_src_layout.buffer_box(rank()).lower;
    p.in_local = p.window.dst.shifted(-in_origin);
    p.out_local = p.window.src.shifted(-out_origin);
    p.target_local = src_box.shifted(-out_origin);
    p.zero_first = p.window.src != src_box;
    if (!p.window.dst.empty()) {
      p.kernel.emplace(p.local_desc(desc()), p.window.src.extent,
                       diff_src_layout.local_strides(rank()),
                       p.window.dst.extent,
                       diff_dst_layout.local_strides(rank()),
                       ConvPass::kBackwardData);
    }
    return p;
  }

  void plan_pieces() {
    const Box src_shard = src_layout.shard(rank());
    const Box dst_shard = dst_layout.shard(rank());
    const bool overlap = options.overlap == ConvOverlap::kInteriorFirst;
    if (!overlap) {
      forward_early.push_back(
          forward_piece("forward", dst_shard, dst_layout, ConvPass::kForward));
      data_early.push_back(data_piece("backward-data", src_shard));
    } else {
      // The core (or, when halos are written in flight, the interior) runs
      // while halos travel; the boundary boxes after, recomputing any core
      // cells that read stale halos.
      const BoxSplit f = geometry.split_forward(dst_shard, src_shard);
      const Box f_early = halos_written_in_flight() ? f.interior : f.core;
      if (!f_early.empty()) {
        forward_early.push_back(forward_piece("forward core", f_early,
                                              dst_layout, ConvPass::kForward));
      }
      for (const Box& b : f.boundary) {
        forward_late.push_back(forward_piece("forward boundary", b,
                                             dst_layout, ConvPass::kForward));
      }
      const BoxSplit d = geometry.split_backward_data(src_shard, dst_shard);
      const Box d_early = halos_written_in_flight() ? d.interior : d.core;
      if (!d_early.empty()) {
        data_early.push_back(data_piece("backward-data core", d_early));
      }
      for (const Box& b : d.boundary) {
        data_late.push_back(data_piece("backward-data boundary", b));
      }
    }
    weights_piece = forward_piece("backward-weights", dst_shard,
                                  diff_dst_layout, ConvPass::kBackwardWeights);
  }

  void run_forward(const Piece<T>& p, DistTensor<T>& src, const T* w,
                   const T* b, DistTensor<T>& dst) const {
    if (p.window.dst.empty()) return;
    const StridedView<T> out = dst.view(p.out_local);
    if (!p.kernel) {  // the outputs read padding only
      out.for_each([&](const Shape& i, T& v) { v = b ? b[i[1]] : T(0); });
      return;
    }
    p.kernel->forward(src.view(p.in_local), w, b, out);
  }

  void run_data(const Piece<T>& p, DistTensor<T>& diff_dst, const T* w,
                DistTensor<T>& diff_src) const {
    if (p.zero_first) {
      diff_src.view(p.target_local).for_each([](const Shape&, T& v) {
        v = T(0);
      });
    }
    if (p.kernel) {
      p.kernel->backward_data(diff_dst.view(p.in_local), w,
                              diff_src.view(p.out_local));
    }
  }

  void check_layout(const DistTensor<T>& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "convolution");
  }
};

template <typename T>
Convolution<T>::Convolution(const ProcessGrid& grid, const ConvDesc& desc,
                            const Distribution& src,
                            const ConvolutionOptions& options) {
  internal::check_grid(src, grid.shape(), "input");
  internal::check_unsplit_channels(src.grid_shape(), "the convolution");
  impl_ = std::make_unique<Impl>(grid, desc, src, options);
}

template <typename T>
Convolution<T>::~Convolution() = default;
template <typename T>
Convolution<T>::Convolution(Convolution&&) noexcept = default;
template <typename T>
Convolution<T>& Convolution<T>::operator=(Convolution&&) noexcept = default;

template <typename T>
typename Convolution<T>::Impl& Convolution<T>::impl() const {
  require(impl_ != nullptr, ErrorKind::kState,
          "convolution used after it was moved from");
  return *impl_;
}

template <typename T>
const ConvGeometry& Convolution<T>::geometry() const {
  return impl().geometry;
}
template <typename T>
const HaloLayout& Convolution<T>::src_layout() const {
  return impl().src_layout;
}
template <typename T>
const HaloLayout& Convolution<T>::dst_layout() const {
  return impl().dst_layout;
}
template <typename T>
const HaloLayout& Convolution<T>::diff_dst_layout() const {
  return impl().diff_dst_layout;
}
template <typename T>
const HaloLayout& Convolution<T>::diff_src_layout() const {
  return impl().diff_src_layout;
}
template <typename T>
const ConvStats& Convolution<T>::stats() const {
  return impl().stats;
}
template <typename T>
void Convolution<T>::reset_stats() {
  impl().stats = ConvStats{};
}

template <typename T>
void Convolution<T>::forward(DistTensor<T>& src, const T* weights,
                             const T* bias, DistTensor<T>& dst) {
  Impl& s = impl();
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(dst, s.dst_layout, "dst");
  require(weights != nullptr, ErrorKind::kInvalidArgument, "weights are null");
  require(bias != nullptr || s.desc().bias == ConvBias::kNone,
          ErrorKind::kInvalidArgument,
          "the convolution adds a bias but bias is null");
  if (s.desc().bias == ConvBias::kNone) bias = nullptr;
  s.src_halo.start(src);
  for (const Piece<T>& p : s.forward_early) {
    s.run_forward(p, src, weights, bias, dst);
  }
  s.stats.halo_wait_s += s.src_halo.wait();
  for (const Piece<T>& p : s.forward_late) {
    s.run_forward(p, src, weights, bias, dst);
  }
}

template <typename T>
void Convolution<T>::backward_data(DistTensor<T>& diff_dst, const T* weights,
                                   DistTensor<T>& diff_src) {
  Impl& s = impl();
  s.check_layout(diff_dst, s.diff_dst_layout, "diff_dst");
  s.check_layout(diff_src, s.diff_src_layout, "diff_src");
  require(weights != nullptr, ErrorKind::kInvalidArgument, "weights are null");
  s.diff_dst_halo.start(diff_dst);
  for (const Piece<T>& p : s.data_early) {
    s.run_data(p, diff_dst, weights, diff_src);
    s.grads.poke();
  }
  s.stats.halo_wait_s += s.diff_dst_halo.wait();
  for (const Piece<T>& p : s.data_late) {
    s.run_data(p, diff_dst, weights, diff_src);
    s.grads.poke();
  }
}

template <typename T>
void Convolution<T>::backward_weights(const DistTensor<T>& src,
                                      const DistTensor<T>& diff_dst,
                                      T* diff_weights, T* diff_bias) {
  Impl& s = impl();
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(diff_dst, s.diff_dst_layout, "diff_dst");
  require(diff_weights != nullptr, ErrorKind::kInvalidArgument,
          "diff_weights is null");
  require(diff_bias != nullptr || s.desc().bias == ConvBias::kNone,
          ErrorKind::kInvalidArgument,
          "the convolution adds a bias but diff_bias is null");
  s.grads.zero();
  T* db = s.grads.bias();
  const Piece<T>& p = s.weights_piece;
  const StridedView<const T> dd = diff_dst.buffer().subview(p.out_local);
  if (p.kernel) {
    p.kernel->backward_weights(src.buffer().subview(p.in_local), dd,
                               s.grads.weights(), db);
  } else if (db != nullptr) {  // outputs that read padding only
    dd.for_each([&](const Shape& i, const T& v) { db[i[1]] += v; });
  }
  s.grads.start(diff_weights, diff_bias);
}

template <typename T>
void Convolution<T>::wait_gradients() {
  Impl& s = impl();
  s.stats.allreduce_wait_s += s.grads.wait();
}

template <typename T>
std::string Convolution<T>::describe() const {
  const Impl& s = impl();
  std::ostringstream out;
  auto line = [&](const Piece<T>& p) {
    out << p.label << " " << p.box << ": "
        << (p.kernel ? p.kernel->implementation() : std::string("no kernel"))
        << "\n";
  };
  for (const auto* list : {&s.forward_early, &s.forward_late, &s.data_early,
                           &s.data_late}) {
    for (const Piece<T>& p : *list) line(p);
  }
  line(s.weights_piece);
  return out.str();
}

template class Convolution<float>;
template class Convolution<double>;

}  // namespace distconv
