#include "distconv/convolution.h"

#include <climits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/channel_collective.h"
#include "distconv/internal/gradient_sum.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "kernels/local_conv.h"

namespace distconv {
namespace {

// How the plan divides the work (see convolution.h).
enum class Scheme {
  kLocal,             // channels whole, or split between groups
  kStationaryOutput,  // allgather x, reduce-scatter dx
  kStationaryInput,   // reduce-scatter y, allgather dy
};

Scheme scheme_of(const ConvGeometry& g, const Distribution& src,
                 ChannelParallelism channels) {
  if (g.channel_split(src) != ChannelSplit::kInsideGroups) {
    return Scheme::kLocal;
  }
  return channels == ChannelParallelism::kStationaryInput
             ? Scheme::kStationaryInput
             : Scheme::kStationaryOutput;
}

// Where a pass reads or writes: a caller's tensor or one of the layer's
// full-channel tensors. `box`: the global cells the local buffer holds,
// channels included; `strides`: their element strides.
struct Buffer {
  Box box;
  Shape strides;

  static Buffer of(const HaloLayout& layout, int part) {
    return {layout.buffer_box(part), layout.local_strides(part)};
  }
  // `global` in local coordinates, with all of the buffer's channels (a
  // piece always convolves every channel its buffers hold).
  Box local(const Box& global) const {
    Box b = global.shifted(-box.lower);
    b.lower[1] = 0;
    b.extent[1] = box.extent[1];
    return b;
  }
  // The same cells with the buffer's channels: the box a pass computes.
  Box work(Box global) const {
    global.lower[1] = box.lower[1];
    global.extent[1] = box.extent[1];
    return global;
  }
  Index channels() const { return box.extent[1]; }
  template <typename T>
  StridedView<T> view(T* data, const Box& local_box) const {
    return StridedView<T>(data, box.extent, strides).subview(local_box);
  }
};

// `layout` with every one of `channels` channels on each rank of a channel
// group, as a layout over the grid of the ranks sharing a channel
// coordinate (grid extent 1 in channels): the cells and halos of the
// group's members that hold channels. Throws kInvalidArgument (naming
// `what`) if those members have different halos.
HaloLayout full_channel_layout(const HaloLayout& layout, Index channels,
                               const char* what) {
  const Distribution& d = layout.distribution();
  std::vector<BlockPartition> parts;
  std::vector<Boundary> boundaries;
  for (int i = 0; i < d.ndims(); ++i) {
    parts.push_back(i == 1 ? BlockPartition::balanced(channels, 1)
                           : d.partition(i));
    boundaries.push_back(layout.boundary(i));
  }
  const Distribution full(std::move(parts));
  std::vector<HaloWidths> widths(full.num_parts(),
                                 HaloWidths::none(d.ndims()));
  for (int q = 0; q < full.num_parts(); ++q) {
    Shape coord = full.part_coord(q);
    bool found = false;
    for (Index c = 0; c < d.grid_shape()[1]; ++c) {
      coord[1] = c;
      const int part = d.part_index(coord);
      if (d.shard(part).extent[1] == 0) continue;
      require(!found || layout.widths(part) == widths[q],
              ErrorKind::kInvalidArgument, "the ", what,
              " layout gives the parts of one channel group different halos "
              "(part ",
              part, ")");
      widths[q] = layout.widths(part);
      found = true;
    }
  }
  return HaloLayout(full, std::move(widths), std::move(boundaries))
      .with_storage(StorageOrder::kChannelsLast);
}

Shape channel_slice_shape(Shape grid) {
  grid[1] = 1;
  return grid;
}

// One local convolution of a pass: a ConvGeometry window and its kernel,
// with the window's boxes in the local coordinates of the buffers it reads
// and writes.
template <typename T>
struct Piece {
  std::string label;
  Box box;            // global: the outputs (forward, weights) or input
                      // gradients (data) this piece computes
  ConvWindow window;  // global coordinates
  Box in_local;       // forward / weights: x; backward-data: dy
  Box out_local;      // forward / weights: y or dy; data: dx
  Box target_local;   // backward-data: the dx box this piece owns
  bool zero_first = false;  // backward-data: target larger than the window
  std::optional<LocalConv<T>> kernel;  // none: nothing reads the input
};

}  // namespace

template <typename T>
struct Convolution<T>::Impl {
  const ProcessGrid* grid;
  ConvolutionOptions options;
  ConvGeometry geometry;
  Scheme scheme;
  Distribution dst;  // lined up with the input's distribution
  HaloLayout src_layout, dst_layout, diff_dst_layout, diff_src_layout;
  // The ranks sharing this rank's channel coordinate, and the tensors
  // holding every channel of a channel group (channel schemes only).
  std::optional<ProcessGrid> slice;
  std::optional<DistTensor<T>> x_full, y_full, dy_full, dx_full;
  std::optional<internal::ChannelCollective<T>> x_gather, y_sum, dy_gather,
      dx_sum;
  // The src tensor forward() gathered, and the diff_dst tensor a backward
  // pass gathered since (null: none).
  const DistTensor<T>* gathered_x = nullptr;
  const DistTensor<T>* gathered_dy = nullptr;
  // What the passes read and write: the caller's tensors or the above.
  Buffer x_buf, y_buf, dy_buf, dx_buf;
  Box weights_block, bias_block;
  std::optional<HaloExchange<T>> x_halo, dy_halo;
  std::vector<Piece<T>> forward_early, forward_late;
  std::vector<Piece<T>> data_early, data_late;
  Piece<T> weights_piece;
  std::optional<internal::GradientSum<T>> grads;  // weights, then bias
  ConvStats stats;

  Impl(const ProcessGrid& g, const ConvDesc& d, const Distribution& src,
       const ConvolutionOptions& o)
      : grid(&g),
        options(o),
        geometry(d, src.global_shape()),
        scheme(scheme_of(geometry, src, o.channels)),
        dst(geometry.dst_distribution(src)),
        src_layout(chosen_layout(
            o.src_layout,
            geometry.src_layout(src, dst, StorageOrder::kChannelsLast),
            "src")),
        dst_layout(HaloLayout(dst).with_storage(StorageOrder::kChannelsLast)),
        diff_dst_layout(
            geometry.diff_dst_layout(src, dst, StorageOrder::kChannelsLast)),
        diff_src_layout(
            HaloLayout(src).with_storage(StorageOrder::kChannelsLast)) {
    plan_buffers();
    const ProcessGrid& xg = scheme == Scheme::kStationaryOutput ? *slice : g;
    const ProcessGrid& dyg = scheme == Scheme::kStationaryInput ? *slice : g;
    x_halo.emplace(xg, x_full ? x_full->layout() : src_layout, o.halo);
    dy_halo.emplace(dyg, dy_full ? dy_full->layout() : diff_dst_layout,
                    o.halo);
    grads.emplace(g.slice(1), weights_block.extent.volume(),
                  desc().bias == ConvBias::kAdd ? bias_block.extent.volume()
                                                : 0);
    plan_pieces();
  }

  const ConvDesc& desc() const { return geometry.desc(); }
  int rank() const { return grid->rank(); }
  // Nothing may read halo cells early (not even to recompute them) when
  // the transport receives into the tensor while in flight.
  bool halos_written_in_flight() const {
    return receives_in_flight(options.halo.transport);
  }

  // The full-channel tensor of `layout` (`channels` channels) on the
  // channel slice, and the collective moving its channels.
  void full_tensor(const HaloLayout& layout, Index channels, const char* what,
                   std::optional<DistTensor<T>>& tensor,
                   std::optional<internal::ChannelCollective<T>>& coll) {
    tensor.emplace(*slice, full_channel_layout(layout, channels, what));
    check_counts(tensor->size());
    coll.emplace(grid->along(1), layout.distribution().partition(1),
                 tensor->size() / channels);
  }

  // The channel collectives count in int: every rank agrees (collectively,
  // so that all throw together) that no rank's full-channel buffer of
  // `elements` exceeds that.
  void check_counts(Index elements) const {
    long long most = elements;
    internal::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG,
                                      MPI_MAX, grid->comm()),
                        "MPI_Allreduce");
    require(most <= INT_MAX, ErrorKind::kUnsupported,
            "channel parallelism: a buffer of ", most,
            " elements with every channel exceeds MPI's count limit of ",
            INT_MAX);
  }

  void plan_buffers() {
    const Index c = desc().in_channels, f = desc().out_channels;
    if (scheme != Scheme::kLocal) {
      slice.emplace(grid->slice(1), channel_slice_shape(grid->shape()));
    }
    if (scheme == Scheme::kStationaryOutput) {
      full_tensor(src_layout, c, "src", x_full, x_gather);
      full_tensor(diff_src_layout, c, "diff_src", dx_full, dx_sum);
    } else if (scheme == Scheme::kStationaryInput) {
      full_tensor(dst_layout, f, "dst", y_full, y_sum);
      full_tensor(diff_dst_layout, f, "diff_dst", dy_full, dy_gather);
    }
    auto buffer = [&](const std::optional<DistTensor<T>>& full,
                      const HaloLayout& layout) {
      return full ? Buffer::of(full->layout(), slice->rank())
                  : Buffer::of(layout, rank());
    };
    x_buf = buffer(x_full, src_layout);
    y_buf = buffer(y_full, dst_layout);
    dy_buf = buffer(dy_full, diff_dst_layout);
    dx_buf = buffer(dx_full, diff_src_layout);
    // Weights: the filters this rank computes (all of them when it sums
    // partial outputs) by the input channels it reads (all of a group's,
    // or its own when it keeps its input).
    const Shape ws = desc().weights_shape();
    weights_block = Box{Shape::filled(ws.ndims(), 0), ws};
    weights_block.lower[0] = y_buf.box.lower[1];
    weights_block.extent[0] = y_buf.channels();
    if (scheme == Scheme::kStationaryInput) {
      weights_block.lower[1] = x_buf.box.lower[1];
      weights_block.extent[1] = x_buf.channels();
    }
    const Box own = dst_layout.shard(rank());
    bias_block = Box{Shape{own.lower[1]}, Shape{own.extent[1]}};
  }

  // The convolution a piece runs: the window's padding, the buffers'
  // channels.
  ConvDesc local_desc(const ConvWindow& w, Index in_channels,
                      Index out_channels) const {
    ConvDesc d = desc();
    d.padding_lower = w.padding_lower;
    d.padding_upper = w.padding_upper;
    d.in_channels = in_channels;
    d.out_channels = out_channels;
    // Whole groups, or one group cut into channel blocks.
    d.groups = scheme == Scheme::kLocal
                   ? in_channels / (desc().in_channels / desc().groups)
                   : 1;
    // Partial sums over channels take no bias: forward adds it after the
    // reduce-scatter, backward-weights sums it from the own filters.
    if (scheme == Scheme::kStationaryInput) d.bias = ConvBias::kNone;
    return d;
  }

  Piece<T> forward_piece(const std::string& label, const Box& dst_box,
                         const Buffer& out, ConvPass pass) const {
    Piece<T> p;
    p.label = label;
    p.box = dst_box;
    p.window = geometry.forward_window(dst_box);
    p.in_local = x_buf.local(p.window.src);
    p.out_local = out.local(p.window.dst);
    if (!p.window.dst.empty() && !p.window.src.empty() &&
        x_buf.channels() > 0 && out.channels() > 0) {
      p.kernel.emplace(
          local_desc(p.window, x_buf.channels(), out.channels()),
          p.in_local.extent, x_buf.strides, p.out_local.extent, out.strides,
          pass);
    }
    return p;
  }

  Piece<T> data_piece(const std::string& label, const Box& src_box) const {
    Piece<T> p;
    p.label = label;
    p.box = src_box;
    p.window = geometry.backward_data_window(src_box);
    p.in_local = dy_buf.local(p.window.dst);
    p.out_local = dx_buf.local(p.window.src);
    p.target_local = dx_buf.local(src_box);
    if (!p.window.dst.empty() && dy_buf.channels() > 0 &&
        dx_buf.channels() > 0) {
      p.kernel.emplace(
          local_desc(p.window, dx_buf.channels(), dy_buf.channels()),
          p.out_local.extent, dx_buf.strides, p.in_local.extent,
          dy_buf.strides, ConvPass::kBackwardData);
    }
    p.zero_first = !p.kernel || p.out_local != p.target_local;
    return p;
  }

  void plan_pieces() {
    const Box src_shard = dx_buf.work(src_layout.shard(rank()));
    const Box dst_shard = y_buf.work(dst_layout.shard(rank()));
    const bool overlap = options.overlap == ConvOverlap::kInteriorFirst;
    if (!overlap) {  // everything after the halos have arrived
      forward_late.push_back(
          forward_piece("forward", dst_shard, y_buf, ConvPass::kForward));
      data_late.push_back(data_piece("backward-data", src_shard));
    } else {
      // The core (or, when halos are written in flight, the interior) runs
      // while halos travel; the boundary boxes after, recomputing any core
      // cells that read stale halos.
      const BoxSplit f = geometry.split_forward(dst_shard, src_shard);
      const Box f_early = halos_written_in_flight() ? f.interior : f.core;
      if (!f_early.empty()) {
        forward_early.push_back(
            forward_piece("forward core", f_early, y_buf, ConvPass::kForward));
      }
      for (const Box& b : f.boundary) {
        forward_late.push_back(
            forward_piece("forward boundary", b, y_buf, ConvPass::kForward));
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
    weights_piece =
        forward_piece("backward-weights", dy_buf.work(dst_shard), dy_buf,
                      ConvPass::kBackwardWeights);
  }

  void run_forward(const Piece<T>& p, const T* x, const T* w, const T* b,
                   T* y) const {
    if (p.window.dst.empty()) return;
    const StridedView<T> out = y_buf.view(y, p.out_local);
    if (!p.kernel) {  // the outputs read padding (or no channel) only
      out.for_each([&](const Shape& i, T& v) { v = b ? b[i[1]] : T(0); });
      return;
    }
    p.kernel->forward(x_buf.view(x, p.in_local), w, b, out);
  }

  void run_data(const Piece<T>& p, const T* dy, const T* w, T* dx) const {
    if (p.zero_first) {
      dx_buf.view(dx, p.target_local).for_each([](const Shape&, T& v) {
        v = T(0);
      });
    }
    if (p.kernel) {
      p.kernel->backward_data(dy_buf.view(dy, p.in_local), w,
                              dx_buf.view(dx, p.out_local));
    }
  }

  // Runs `pieces` between start() and wait() of `halo` on `t`.
  template <typename Run>
  void overlapped(HaloExchange<T>& halo, DistTensor<T>& t,
                  const std::vector<Piece<T>>& early,
                  const std::vector<Piece<T>>& late, Run run) {
    halo.start(t);
    for (const Piece<T>& p : early) run(p);
    stats.halo_wait_s += halo.wait();
    for (const Piece<T>& p : late) run(p);
  }

  // Gathers diff_dst's filters (kStationaryInput), unless already gathered
  // from this tensor since the last forward().
  void gather_diff_dst(const DistTensor<T>& diff_dst) {
    if (gathered_dy == &diff_dst) return;
    timed([&] {
      dy_gather->allgather(diff_dst.buffer().data(), dy_full->buffer().data());
    });
    gathered_dy = &diff_dst;
  }

  template <typename Fn>
  void timed(Fn fn) {
    const double t0 = MPI_Wtime();
    fn();
    stats.channel_s += MPI_Wtime() - t0;
  }

  void check_layout(const DistTensor<T>& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "convolution");
  }
  void check_block(const T* data, const Box& block, const char* what) const {
    require(data != nullptr || block.empty(), ErrorKind::kInvalidArgument,
            what, " are null");
  }
};

template <typename T>
Convolution<T>::Convolution(const ProcessGrid& grid, const ConvDesc& desc,
                            const Distribution& src,
                            const ConvolutionOptions& options) {
  internal::check_grid(src, grid.shape(), "input");
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
const Box& Convolution<T>::weights_block() const {
  return impl().weights_block;
}
template <typename T>
const Box& Convolution<T>::bias_block() const {
  return impl().bias_block;
}

template <typename T>
void Convolution<T>::forward(DistTensor<T>& src, const T* weights,
                             const T* bias, DistTensor<T>& dst) {
  Impl& s = impl();
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(dst, s.dst_layout, "dst");
  s.check_block(weights, s.weights_block, "weights");
  const bool has_bias = s.desc().bias == ConvBias::kAdd;
  require(bias != nullptr || !has_bias || s.bias_block.empty(),
          ErrorKind::kInvalidArgument,
          "the convolution adds a bias but bias is null");
  if (!has_bias) bias = nullptr;
  s.gathered_dy = nullptr;
  // The tensors the pieces read and write.
  DistTensor<T>& x = s.x_full ? *s.x_full : src;
  T* y = s.y_full ? s.y_full->buffer().data() : dst.buffer().data();
  if (s.x_gather) {
    s.timed([&] {
      s.x_gather->allgather(src.buffer().data(), x.buffer().data());
    });
    s.gathered_x = &src;
  }
  const T* piece_bias = s.y_sum ? nullptr : bias;  // partial sums: later
  s.overlapped(s.x_halo.value(), x, s.forward_early, s.forward_late,
               [&](const Piece<T>& p) {
                 s.run_forward(p, x.buffer().data(), weights, piece_bias, y);
               });
  if (s.y_sum) {
    s.timed([&] { s.y_sum->reduce_scatter(y, dst.buffer().data()); });
    if (bias != nullptr) {
      dst.interior().for_each([&](const Shape& i, T& v) { v += bias[i[1]]; });
    }
  }
}

template <typename T>
void Convolution<T>::backward_data(DistTensor<T>& diff_dst, const T* weights,
                                   DistTensor<T>& diff_src) {
  Impl& s = impl();
  s.check_layout(diff_dst, s.diff_dst_layout, "diff_dst");
  s.check_layout(diff_src, s.diff_src_layout, "diff_src");
  s.check_block(weights, s.weights_block, "weights");
  if (s.dy_gather) s.gather_diff_dst(diff_dst);
  DistTensor<T>& dy = s.dy_full ? *s.dy_full : diff_dst;
  T* dx = s.dx_full ? s.dx_full->buffer().data() : diff_src.buffer().data();
  s.overlapped(s.dy_halo.value(), dy, s.data_early, s.data_late,
               [&](const Piece<T>& p) {
                 s.run_data(p, dy.buffer().data(), weights, dx);
                 s.grads->poke();
               });
  if (s.dx_sum) {
    s.timed([&] { s.dx_sum->reduce_scatter(dx, diff_src.buffer().data()); });
  }
}

template <typename T>
void Convolution<T>::backward_weights(const DistTensor<T>& src,
                                      const DistTensor<T>& diff_dst,
                                      T* diff_weights, T* diff_bias) {
  Impl& s = impl();
  s.check_layout(src, s.src_layout, "src");
  s.check_layout(diff_dst, s.diff_dst_layout, "diff_dst");
  s.check_block(diff_weights, s.weights_block, "diff_weights");
  const bool has_bias = s.desc().bias == ConvBias::kAdd;
  require(diff_bias != nullptr || !has_bias || s.bias_block.empty(),
          ErrorKind::kInvalidArgument,
          "the convolution adds a bias but diff_bias is null");
  require(!s.x_gather || s.gathered_x == &src,
          ErrorKind::kState,
          "backward_weights reads the input channels forward() gathered: "
          "call forward() on this src first (stationary-output channel "
          "parallelism)");
  if (s.dy_gather) s.gather_diff_dst(diff_dst);
  s.grads->zero();
  T* db = s.grads->bias();
  const Piece<T>& p = s.weights_piece;
  const T* x = s.x_full ? s.x_full->buffer().data() : src.buffer().data();
  const T* dy = s.dy_full ? s.dy_full->buffer().data() : diff_dst.buffer().data();
  // With every filter gathered, the bias gradient is the own filters' sum.
  T* kernel_db = s.dy_full ? nullptr : db;
  const StridedView<const T> dd = s.dy_buf.view(dy, p.out_local);
  if (p.kernel) {
    p.kernel->backward_weights(s.x_buf.view(x, p.in_local), dd,
                               s.grads->weights(), kernel_db);
  } else if (kernel_db != nullptr) {  // outputs that read padding only
    dd.for_each([&](const Shape& i, const T& v) { kernel_db[i[1]] += v; });
  }
  if (s.dy_full && db != nullptr) {
    diff_dst.interior().for_each(
        [&](const Shape& i, const T& v) { db[i[1]] += v; });
  }
  s.grads->start(diff_weights, diff_bias);
}

template <typename T>
void Convolution<T>::wait_gradients() {
  Impl& s = impl();
  s.stats.allreduce_wait_s += s.grads->wait();
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
  if (s.scheme != Scheme::kLocal) {
    const bool output = s.scheme == Scheme::kStationaryOutput;
    out << "channels: stationary " << (output ? "output" : "input") << " over "
        << s.grid->shape()[1] << " ranks ("
        << (output ? "allgather of src, reduce-scatter of diff_src"
                   : "reduce-scatter of dst, allgather of diff_dst")
        << "); weights block " << s.weights_block << "\n";
  }
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
