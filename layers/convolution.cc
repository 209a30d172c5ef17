#include "layers/convolution.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "kernels/local_conv.h"
#include "layers/internal/channel_cells.h"
#include "layers/internal/channel_collective.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/gradient_sum.h"
#include "layers/internal/local_conv_of.h"

namespace distconv {
namespace {

// The local kernels of `pieces`, in order.
template <typename T>
std::vector<std::optional<LocalConv<T>>> make_kernels(
    const std::vector<ConvPiece>& pieces) {
  std::vector<std::optional<LocalConv<T>>> kernels;
  kernels.reserve(pieces.size());
  for (const ConvPiece& p : pieces) {
    kernels.push_back(internal::local_conv_of<T>(p.kernel));
  }
  return kernels;
}

// A piece's line of describe(): the implementation its kernel picked.
template <typename T>
std::string describe_run(const ConvPiece& p,
                         const std::optional<LocalConv<T>>& k) {
  return describe_piece(p, k ? k->implementation() : "no kernel");
}

}  // namespace

// The resources a plan runs on: the channel group's grids, full-channel
// tensors and collectives, halo exchanges, local kernels, the gradient
// allreduce; and the state between passes.
template <typename T>
struct Convolution<T>::Impl {
  using Kernels = std::vector<std::optional<LocalConv<T>>>;

  const ProcessGrid* grid;
  ConvPlan plan;
  // Channel parallelism only: the ranks sharing this rank's channel
  // coordinate; the channel group as a pc x pf grid; the tensors holding
  // a member's channel block (x, dx) and filter block (y, dy), the
  // collectives filling and summing them, and a piece of y or dy on its
  // way between members.
  std::optional<ProcessGrid> slice, members;
  std::optional<DistTensor<T>> x_full, y_full, dy_full, dx_full;
  std::optional<internal::ChannelCollective<T>> x_gather, y_sum, dy_gather,
      dx_sum;
  std::vector<T> y_piece, dy_piece;
  // The src tensor forward() gathered, and the diff_dst tensor a backward
  // pass gathered since (null: none).
  const DistTensor<T>* gathered_x = nullptr;
  const DistTensor<T>* gathered_dy = nullptr;
  std::optional<HaloExchange<T>> x_halo, dy_halo;
  Kernels forward_early, forward_late, data_early, data_late;
  std::optional<LocalConv<T>> weights_kernel;
  std::optional<internal::GradientSum<T>> grads;  // weights, then bias
  ConvStats stats;

  Impl(const ProcessGrid& g, ConvPlan p, const HaloSetupOptions& halo)
      : grid(&g), plan(std::move(p)) {
    if (plan.channels.split) {
      check_counts();
      slice.emplace(g.slice(1), plan.slice_shape);
      members.emplace(g.along(1), Shape{plan.channels.pc, plan.channels.pf});
      full_tensor(plan.x_full, x_full, x_gather);
      full_tensor(plan.dx_full, dx_full, dx_sum);
      full_tensor(plan.y_full, y_full, y_sum);
      full_tensor(plan.dy_full, dy_full, dy_gather);
      y_piece.resize(plan.y_piece_size);
      dy_piece.resize(plan.dy_piece_size);
    }
    x_halo.emplace(x_full ? *slice : g,
                   x_full ? x_full->layout() : plan.src_layout, halo);
    dy_halo.emplace(dy_full ? *slice : g,
                    dy_full ? dy_full->layout() : plan.diff_dst_layout, halo);
    grads.emplace(g.slice(1), plan.weights_block.extent.volume(),
                  desc().bias == ConvBias::kAdd
                      ? plan.bias_block.extent.volume()
                      : 0);
    forward_early = make_kernels<T>(plan.forward_early);
    forward_late = make_kernels<T>(plan.forward_late);
    data_early = make_kernels<T>(plan.data_early);
    data_late = make_kernels<T>(plan.data_late);
    weights_kernel = internal::local_conv_of<T>(plan.weights_piece.kernel);
  }

  const ConvDesc& desc() const { return plan.desc(); }

  // The tensor and collective of a full-channel tensor of the plan.
  void full_tensor(const std::optional<ConvChannelTensor>& planned,
                   std::optional<DistTensor<T>>& tensor,
                   std::optional<internal::ChannelCollective<T>>& coll) {
    if (!planned) return;
    tensor.emplace(*slice, planned->layout);
    const Index n = planned->block.extent();
    coll.emplace(members->along(planned->members_dim), planned->block,
                 n > 0 ? tensor->size() / n : 0);
  }

  // The channel collectives count in int: every rank agrees (collectively,
  // so that all throw together) that no rank's full-channel buffer
  // exceeds that.
  void check_counts() const {
    long long most = 0;
    for (const auto* t :
         {&plan.x_full, &plan.dx_full, &plan.y_full, &plan.dy_full}) {
      if (*t) most = std::max<long long>(most, plan.slice_elements(**t));
    }
    internal::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG,
                                      MPI_MAX, grid->comm()),
                        "MPI_Allreduce");
    require(most <= INT_MAX, ErrorKind::kUnsupported,
            "channel parallelism: a buffer of ", most,
            " elements (a shard with a channel or filter block) exceeds "
            "MPI's count limit of ",
            INT_MAX);
  }

  void run_forward(const ConvPiece& p, const std::optional<LocalConv<T>>& k,
                   const T* x, const T* w, const T* b, T* y) const {
    if (p.window.dst.empty()) return;
    const StridedView<T> out = plan.y_buf.view(y, p.out_local);
    if (!k) {  // the outputs read padding (or no channel) only
      out.for_each([&](const Shape& i, T& v) { v = b ? b[i[1]] : T(0); });
      return;
    }
    k->forward(plan.x_buf.view(x, p.in_local), w, b, out);
  }

  void run_data(const ConvPiece& p, const std::optional<LocalConv<T>>& k,
                const T* dy, const T* w, T* dx) const {
    if (p.zero_first) {
      plan.dx_buf.view(dx, p.target_local).for_each([](const Shape&, T& v) {
        v = T(0);
      });
    }
    if (k) {
      k->backward_data(plan.dy_buf.view(dy, p.in_local), w,
                       plan.dx_buf.view(dx, p.out_local));
    }
  }

  // Runs the early pieces between start() and wait() of `halo` on `t`,
  // the late ones after.
  template <typename Run>
  void overlapped(HaloExchange<T>& halo, DistTensor<T>& t,
                  const std::vector<ConvPiece>& early_pieces,
                  const Kernels& early,
                  const std::vector<ConvPiece>& late_pieces,
                  const Kernels& late, Run run) {
    halo.start(t);
    for (size_t i = 0; i < early.size(); ++i) run(early_pieces[i], early[i]);
    stats.halo_wait_s += halo.wait();
    for (size_t i = 0; i < late.size(); ++i) run(late_pieces[i], late[i]);
  }

  // Gathers diff_dst's filter block (pc > 1), unless already gathered from
  // this tensor since the last forward().
  void gather_diff_dst(const DistTensor<T>& diff_dst) {
    if (gathered_dy == &diff_dst) return;
    timed([&] {
      const T* from = diff_dst.buffer().data();
      if (plan.channels.transposed()) {  // back to the member that made it
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
  int piece_owner() const { return plan.channels.piece_owner(members->rank()); }
  int piece_maker() const { return plan.channels.piece_maker(members->rank()); }
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
  impl_ = internal::Pimpl<Impl>::make(
      "convolution", grid, plan_convolution(desc, src, grid.rank(), options),
      options.halo);
}

template <typename T>
Convolution<T>::Convolution(const ProcessGrid& grid, ConvPlan plan,
                            const HaloSetupOptions& halo) {
  // Checked together: a plan made for another rank or grid on one rank
  // throws on every rank, before any collective.
  internal::check_given_plan(
      grid, plan.src_layout.distribution(), plan.rank, "convolution", [&] {
        require(plan.transport == halo.transport, ErrorKind::kInvalidArgument,
                "the convolution was planned for another halo transport "
                "than the one given");
      });
  impl_ = internal::Pimpl<Impl>::make("convolution", grid, std::move(plan),
                                      halo);
}

template <typename T>
const ConvGeometry& Convolution<T>::geometry() const {
  return impl().plan.geometry;
}
template <typename T>
const HaloLayout& Convolution<T>::src_layout() const {
  return impl().plan.src_layout;
}
template <typename T>
const HaloLayout& Convolution<T>::dst_layout() const {
  return impl().plan.dst_layout;
}
template <typename T>
const HaloLayout& Convolution<T>::diff_dst_layout() const {
  return impl().plan.diff_dst_layout;
}
template <typename T>
const HaloLayout& Convolution<T>::diff_src_layout() const {
  return impl().plan.diff_src_layout;
}
template <typename T>
const ConvPlan& Convolution<T>::plan() const {
  return impl().plan;
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
  return impl().plan.weights_block;
}
template <typename T>
const Box& Convolution<T>::bias_block() const {
  return impl().plan.bias_block;
}

template <typename T>
void Convolution<T>::forward(DistTensor<T>& src, const T* weights,
                             const T* bias, DistTensor<T>& dst) {
  Impl& s = impl();
  s.check_layout(src, s.plan.src_layout, "src");
  s.check_layout(dst, s.plan.dst_layout, "dst");
  s.check_block(weights, s.plan.weights_block, "weights");
  const bool has_bias = s.desc().bias == ConvBias::kAdd;
  require(bias != nullptr || !has_bias || s.plan.bias_block.empty(),
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
  s.overlapped(s.x_halo.value(), x, s.plan.forward_early, s.forward_early,
               s.plan.forward_late, s.forward_late,
               [&](const ConvPiece& p, const std::optional<LocalConv<T>>& k) {
                 s.run_forward(p, k, x.buffer().data(), weights, piece_bias,
                               y);
               });
  if (s.y_sum) {
    s.timed([&] {
      if (!s.plan.channels.transposed()) {
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
  s.check_layout(diff_dst, s.plan.diff_dst_layout, "diff_dst");
  s.check_layout(diff_src, s.plan.diff_src_layout, "diff_src");
  s.check_block(weights, s.plan.weights_block, "weights");
  if (s.dy_gather) s.gather_diff_dst(diff_dst);
  DistTensor<T>& dy = s.dy_full ? *s.dy_full : diff_dst;
  T* dx = s.dx_full ? s.dx_full->buffer().data() : diff_src.buffer().data();
  s.overlapped(s.dy_halo.value(), dy, s.plan.data_early, s.data_early,
               s.plan.data_late, s.data_late,
               [&](const ConvPiece& p, const std::optional<LocalConv<T>>& k) {
                 s.run_data(p, k, dy.buffer().data(), weights, dx);
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
  s.check_layout(src, s.plan.src_layout, "src");
  s.check_layout(diff_dst, s.plan.diff_dst_layout, "diff_dst");
  s.check_block(diff_weights, s.plan.weights_block, "diff_weights");
  const bool has_bias = s.desc().bias == ConvBias::kAdd;
  require(diff_bias != nullptr || !has_bias || s.plan.bias_block.empty(),
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
  const ConvPiece& p = s.plan.weights_piece;
  const T* x = s.x_full ? s.x_full->buffer().data() : src.buffer().data();
  const T* dy =
      s.dy_full ? s.dy_full->buffer().data() : diff_dst.buffer().data();
  // With every filter gathered, the bias gradient is the own filters' sum.
  T* kernel_db = s.dy_full ? nullptr : db;
  const StridedView<const T> dd = s.plan.dy_buf.view(dy, p.out_local);
  if (s.weights_kernel) {
    s.weights_kernel->backward_weights(s.plan.x_buf.view(x, p.in_local), dd,
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
  std::string out = s.plan.describe_channels();
  auto lines = [&](const std::vector<ConvPiece>& pieces,
                   const typename Impl::Kernels& kernels) {
    for (size_t i = 0; i < pieces.size(); ++i) {
      out += describe_run(pieces[i], kernels[i]);
    }
  };
  lines(s.plan.forward_early, s.forward_early);
  lines(s.plan.forward_late, s.forward_late);
  lines(s.plan.data_early, s.data_early);
  lines(s.plan.data_late, s.data_late);
  return out + describe_run(s.plan.weights_piece, s.weights_kernel);
}

template class Convolution<float>;
template class Convolution<double>;

}  // namespace distconv
