#include "layers/convolution.h"

#include <climits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "halo/halo_exchange.h"
#include "layers/internal/channel_cells.h"
#include "layers/internal/channel_collective.h"
#include "layers/internal/channel_plan.h"
#include "layers/internal/gradient_sum.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "kernels/local_conv.h"

namespace distconv {
namespace {

using internal::channel_plan;
using internal::channel_slice_shape;
using internal::ChannelPlan;
using internal::full_channel_layout;
using internal::sub_partition;
using internal::with_filter_pieces;

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
  ChannelPlan channels;
  Distribution dst;  // lined up with the input's distribution
  HaloLayout src_layout, dst_layout, diff_dst_layout, diff_src_layout;
  // Channel parallelism only: the ranks sharing this rank's channel
  // coordinate; the channel group as a pc x pf grid; the tensors holding
  // a member's channel block (x, dx; when pf > 1) and filter block (y, dy;
  // when pc > 1), the collectives filling and summing them, and a piece of
  // y or dy on its way between members (when both are > 1).
  std::optional<ProcessGrid> slice, members;
  std::optional<DistTensor<T>> x_full, y_full, dy_full, dx_full;
  std::optional<internal::ChannelCollective<T>> x_gather, y_sum, dy_gather,
      dx_sum;
  std::vector<T> y_piece, dy_piece;
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
        channels(channel_plan(geometry, src, o)),
        dst(with_filter_pieces(geometry.dst_distribution(src), channels,
                               d.out_channels)),
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
    x_halo.emplace(x_full ? *slice : g,
                   x_full ? x_full->layout() : src_layout, o.halo);
    dy_halo.emplace(dy_full ? *slice : g,
                    dy_full ? dy_full->layout() : diff_dst_layout, o.halo);
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

  // The tensor of `layout`'s cells with the channels of `block` (the
  // members of `comm` hold its parts) on the channel slice, and the
  // collective moving them.
  void full_tensor(const HaloLayout& layout, const BlockPartition& block,
                   MPI_Comm comm, const char* what,
                   std::optional<DistTensor<T>>& tensor,
                   std::optional<internal::ChannelCollective<T>>& coll) {
    const Index n = block.extent();
    tensor.emplace(*slice, full_channel_layout(layout, n, what));
    check_counts(tensor->size());
    coll.emplace(comm, block, n > 0 ? tensor->size() / n : 0);
  }

  // The channel collectives count in int: every rank agrees (collectively,
  // so that all throw together) that no rank's block-wide buffer of
  // `elements` exceeds that.
  void check_counts(Index elements) const {
    long long most = elements;
    internal::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG,
                                      MPI_MAX, grid->comm()),
                        "MPI_Allreduce");
    require(most <= INT_MAX, ErrorKind::kUnsupported,
            "channel parallelism: a buffer of ", most,
            " elements (a shard with a channel or filter block) exceeds "
            "MPI's count limit of ",
            INT_MAX);
  }

  void plan_buffers() {
    const Index f = desc().out_channels;
    const int pc = channels.pc, pf = channels.pf;
    Index first_c = 0, first_f = 0;  // of this member's blocks
    if (channels.split) {
      slice.emplace(grid->slice(1), channel_slice_shape(grid->shape()));
      members.emplace(grid->along(1), Shape{pc, pf});
      const int i = static_cast<int>(members->coord()[0]);
      const int j = static_cast<int>(members->coord()[1]);
      const BlockPartition& c_parts = src_layout.distribution().partition(1);
      const BlockPartition f_blocks = BlockPartition::balanced(f, pf);
      first_c = c_parts.begin(i * pf);
      first_f = f_blocks.begin(j);
      if (pf > 1) {  // gather the channel block over the row of members
        const BlockPartition block = sub_partition(c_parts, i * pf, pf);
        full_tensor(src_layout, block, members->along(1), "src", x_full,
                    x_gather);
        full_tensor(diff_src_layout, block, members->along(1), "diff_src",
                    dx_full, dx_sum);
      }
      if (pc > 1) {  // sum the filter block over the column of members
        const BlockPartition pieces =
            BlockPartition::balanced(f_blocks.size(j), pc);
        full_tensor(dst_layout, pieces, members->along(0), "dst", y_full,
                    y_sum);
        full_tensor(diff_dst_layout, pieces, members->along(0), "diff_dst",
                    dy_full, dy_gather);
      }
      if (channels.transposed()) {
        y_piece.resize(y_sum->block_size());
        dy_piece.resize(dy_gather->block_size());
      }
    }
    auto buffer = [&](const std::optional<DistTensor<T>>& full,
                      const HaloLayout& layout, Index first_channel) {
      if (!full) return Buffer::of(layout, rank());
      Buffer b = Buffer::of(full->layout(), slice->rank());
      b.box.lower[1] = first_channel;  // global channel of its channel 0
      return b;
    };
    x_buf = buffer(x_full, src_layout, first_c);
    y_buf = buffer(y_full, dst_layout, first_f);
    dy_buf = buffer(dy_full, diff_dst_layout, first_f);
    dx_buf = buffer(dx_full, diff_src_layout, first_c);
    // Weights: the filters this rank computes by the input channels it
    // reads (all of a group's unless channels are split).
    const Shape ws = desc().weights_shape();
    weights_block = Box{Shape::filled(ws.ndims(), 0), ws};
    weights_block.lower[0] = y_buf.box.lower[1];
    weights_block.extent[0] = y_buf.channels();
    if (channels.split) {
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
    d.groups = channels.split
                   ? 1
                   : in_channels / (desc().in_channels / desc().groups);
    // Partial sums over channels take no bias: forward adds it after the
    // reduce-scatter, backward-weights sums it from the own filters.
    if (y_sum) d.bias = ConvBias::kNone;
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

  // Gathers diff_dst's filter block (pc > 1), unless already gathered from
  // this tensor since the last forward().
  void gather_diff_dst(const DistTensor<T>& diff_dst) {
    if (gathered_dy == &diff_dst) return;
    timed([&] {
      const T* from = diff_dst.buffer().data();
      if (channels.transposed()) {  // back to the member that made it
        swap_piece(from, diff_dst.size(), piece_maker(), dy_piece.data(),
                   static_cast<Index>(dy_piece.size()), piece_owner());
        from = dy_piece.data();
      }
      dy_gather->allgather(from, dy_full->buffer().data());
    });
    gathered_dy = &diff_dst;
  }

  // The member (rank in `members`) that owns the piece of partial sums
  // this member makes, and the one that makes the piece this member owns.
  int piece_owner() const { return channels.piece_owner(members->rank()); }
  int piece_maker() const { return channels.piece_maker(members->rank()); }
  // Sends `n_send` elements to member `to` while receiving `n_recv` from
  // member `from` (counts checked by check_counts).
  void swap_piece(const T* send, Index n_send, int to, T* recv, Index n_recv,
                  int from) const {
    internal::check_mpi(
        MPI_Sendrecv(send, static_cast<int>(n_send),
                     internal::mpi_datatype<T>(), to, 0, recv,
                     static_cast<int>(n_recv), internal::mpi_datatype<T>(),
                     from, 0, members->comm(), MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
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
    s.timed([&] {
      if (!s.channels.transposed()) {
        s.y_sum->reduce_scatter(y, dst.buffer().data());
        return;
      }
      s.y_sum->reduce_scatter(y, s.y_piece.data());
      s.swap_piece(s.y_piece.data(), static_cast<Index>(s.y_piece.size()),
                   s.piece_owner(), dst.buffer().data(), dst.size(),
                   s.piece_maker());
    });
    if (bias != nullptr) internal::add_per_channel(dst.interior(), bias);
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
          "call forward() on this src first (channel parallelism that "
          "gathers the input)");
  if (s.dy_gather) s.gather_diff_dst(diff_dst);
  s.grads->zero();
  T* db = s.grads->bias();
  const Piece<T>& p = s.weights_piece;
  const T* x = s.x_full ? s.x_full->buffer().data() : src.buffer().data();
  const T* dy =
      s.dy_full ? s.dy_full->buffer().data() : diff_dst.buffer().data();
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
    internal::sum_per_channel(diff_dst.interior(), db);
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
  if (s.channels.split) {
    const ChannelPlan& c = s.channels;
    out << "channels: " << c.pc << " channel block(s) x " << c.pf
        << " filter block(s)";
    if (c.pf > 1) out << "; allgather of src, reduce-scatter of diff_src";
    if (c.pc > 1) out << "; reduce-scatter of dst, allgather of diff_dst";
    if (c.transposed()) out << "; pieces of dst and diff_dst swapped";
    out << "; weights block " << s.weights_block << "\n";
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
