// Internal: the convolution's executor, Convolution<T, Space> (see
// layers/convolution.h), written once for every memory space. A space's
// ConvBackend (layers/internal/conv_backend.h) runs the plan's leaves
// there.
//
// The orchestration (pieces, halos started before the interior and waited
// for before the boundary, channel collectives, the gradient allreduce
// overlapping backward-data) is this file's, the same for every space.
// Included by the .cc that instantiates the layer for a space with its
// backend: layers/convolution.cc (host), layers/device_convolution.cc
// (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_CONVOLUTION_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_CONVOLUTION_IMPL_H_

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
#include "layers/convolution.h"
#include "layers/internal/conv_backend.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"

namespace distconv {
namespace internal {

// A piece's line of describe(): the implementation its kernel picked.
template <typename Kernel>
std::string describe_run(const ConvPiece& p, const std::optional<Kernel>& k) {
  return describe_piece(p, k ? k->implementation() : "no kernel");
}

}  // namespace internal

// The resources a plan runs on: the channel group's grids, full-channel
// tensors and collectives, halo exchanges, local kernels, the gradient
// allreduce; and the state between passes.
template <typename T, typename Space>
struct Convolution<T, Space>::Impl {
  using Backend = internal::ConvBackend<T, Space>;
  using Kernel = typename Backend::Kernel;
  using Kernels = std::vector<std::optional<Kernel>>;
  using P = Compute<T>;  // weights, bias, gradients

  const ProcessGrid* grid;
  ConvPlan plan;
  // Channel parallelism only: the ranks sharing this rank's channel
  // coordinate; the channel group as a pc x pf grid; the tensors holding
  // a member's channel block (x, dx) and filter block (y, dy), the
  // collectives filling and summing them, and a piece of y or dy on its
  // way between members.
  std::optional<ProcessGrid> slice, members;
  std::optional<DistTensor<T, Space>> x_full, y_full, dy_full, dx_full;
  std::optional<typename Backend::Channels> x_gather, y_sum, dy_gather,
      dx_sum;
  typename Backend::Array y_piece, dy_piece;
  // The src tensor forward() gathered, and the diff_dst tensor a backward
  // pass gathered since (null: none).
  const DistTensor<T, Space>* gathered_x = nullptr;
  const DistTensor<T, Space>* gathered_dy = nullptr;
  std::optional<HaloExchange<T, Space>> x_halo, dy_halo;
  // Circular padding only: the input gradient with the padding cells past
  // the ends, and the exchange adding theirs to the cells at the other end.
  std::optional<DistTensor<T, Space>> dx_folded;
  std::optional<HaloExchange<T, Space>> dx_fold;
  Kernels forward_early, forward_late, data_early, data_late;
  std::optional<Kernel> weights_kernel;
  std::optional<typename Backend::Grads> grads;  // weights, then bias
  ConvStats stats;
  typename Backend::Context context;

  Impl(const ProcessGrid& g, ConvPlan p, const HaloSetupOptions& halo,
       const GpuConvOptions& gpu)
      : grid(&g), plan(std::move(p)), context(halo, gpu) {
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
    if (plan.diff_src_folded) {
      dx_folded.emplace(g, *plan.diff_src_folded);
      dx_fold.emplace(g, *plan.diff_src_folded, halo);
    }
    grads.emplace(
        context, g.slice(1), plan.weights_block.extent.volume(),
        desc().bias == ConvBias::kAdd ? plan.bias_block.extent.volume() : 0);
    forward_early = make_kernels(plan.forward_early);
    forward_late = make_kernels(plan.forward_late);
    data_early = make_kernels(plan.data_early);
    data_late = make_kernels(plan.data_late);
    weights_kernel = Backend::kernel(context, plan.weights_piece.kernel);
    std::vector<std::optional<Kernel>*> all{&weights_kernel};
    for (Kernels* ks :
         {&forward_early, &forward_late, &data_early, &data_late}) {
      for (std::optional<Kernel>& k : *ks) all.push_back(&k);
    }
    Backend::agree(g.comm(), all);
  }

  // The local kernels of `pieces`, in order.
  Kernels make_kernels(const std::vector<ConvPiece>& pieces) {
    Kernels kernels;
    kernels.reserve(pieces.size());
    for (const ConvPiece& p : pieces) {
      kernels.push_back(Backend::kernel(context, p.kernel));
    }
    return kernels;
  }

  const ConvDesc& desc() const { return plan.desc(); }

  // The tensor and collective of a full-channel tensor of the plan.
  void full_tensor(const std::optional<ConvChannelTensor>& planned,
                   std::optional<DistTensor<T, Space>>& tensor,
                   std::optional<typename Backend::Channels>& coll) {
    if (!planned) return;
    tensor.emplace(*slice, planned->layout);
    const Index n = planned->block.extent();
    coll.emplace(context, members->along(planned->members_dim),
                 planned->block, n > 0 ? tensor->size() / n : 0);
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

  void run_forward(const ConvPiece& p, const std::optional<Kernel>& k,
                   const T* x, const P* w, const P* b, T* y) const {
    if (p.window.dst.empty()) return;
    const StridedView<T, Space> out =
        plan.y_buf.template view<Space>(y, p.out_local);
    if (!k) {  // the outputs read padding (or no channel) only
      Backend::fill_bias(context, out, b);
      return;
    }
    k->forward(plan.x_buf.template view<Space>(x, p.in_local), w, b, out);
  }

  void run_data(const ConvPiece& p, const std::optional<Kernel>& k, const T* dy,
                const P* w, T* dx) const {
    if (p.zero_first) {
      Backend::fill_bias(context,
                         plan.dx_buf.template view<Space>(dx, p.target_local),
                         nullptr);
    }
    if (k) {
      k->backward_data(plan.dy_buf.template view<Space>(dy, p.in_local), w,
                       plan.dx_buf.template view<Space>(dx, p.out_local));
    }
  }

  // Runs the early pieces between start() and wait() of `halo` on `t`,
  // the late ones after.
  template <typename Run>
  void overlapped(HaloExchange<T, Space>& halo, DistTensor<T, Space>& t,
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
  void gather_diff_dst(const DistTensor<T, Space>& diff_dst) {
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
                  int from) {
    Backend::swap(context, members->comm(), send, n_send, to, recv, n_recv,
                  from);
  }

  template <typename Fn>
  void timed(Fn fn) {
    const double t0 = MPI_Wtime();
    fn();
    stats.channel_s += MPI_Wtime() - t0;
  }

  void check_layout(const DistTensor<T, Space>& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "convolution");
  }
  void check_block(const P* data, const Box& block, const char* what) const {
    require(data != nullptr || block.empty(), ErrorKind::kInvalidArgument, what,
            " are null");
  }
};

template <typename T, typename Space>
Convolution<T, Space>::Convolution(const ProcessGrid& grid,
                                   const ConvDesc& desc,
                                   const Distribution& src,
                                   const ConvolutionOptions& options)
    : Convolution(grid,
                  internal::plan_collectively(
                      grid,
                      [&] {
                        internal::check_grid(src, grid.shape(), "input");
                        return plan_convolution(desc, src, grid.rank(),
                                                options);
                      }),
                  options.halo, options.gpu) {}

template <typename T, typename Space>
Convolution<T, Space>::Convolution(const ProcessGrid& grid, ConvPlan plan,
                                   const HaloSetupOptions& halo,
                                   const GpuConvOptions& gpu) {
  // Checked together: a plan made for another rank or grid on one rank
  // throws on every rank, before any collective.
  internal::check_given_plan(
      grid, plan.src_layout.distribution(), plan.rank,
      internal::fingerprint(plan, internal::element_name<T>(), Space::kName),
      [&] {
        require(plan.transport == halo.transport, ErrorKind::kInvalidArgument,
                "the convolution was planned for another halo transport "
                "than the one given");
      });
  impl_ = internal::Pimpl<Impl>::make("convolution", grid, std::move(plan),
                                      halo, gpu);
}

template <typename T, typename Space>
const ConvGeometry& Convolution<T, Space>::geometry() const {
  return impl().plan.geometry;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::src_layout() const {
  return impl().plan.src_layout;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::dst_layout() const {
  return impl().plan.dst_layout;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::diff_dst_layout() const {
  return impl().plan.diff_dst_layout;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::diff_src_layout() const {
  return impl().plan.diff_src_layout;
}
template <typename T, typename Space>
const ConvPlan& Convolution<T, Space>::plan() const {
  return impl().plan;
}
template <typename T, typename Space>
const ConvStats& Convolution<T, Space>::stats() const {
  return impl().stats;
}
template <typename T, typename Space>
void Convolution<T, Space>::reset_stats() {
  impl().stats = ConvStats{};
}

template <typename T, typename Space>
const Box& Convolution<T, Space>::weights_block() const {
  return impl().plan.weights_block;
}
template <typename T, typename Space>
const Box& Convolution<T, Space>::bias_block() const {
  return impl().plan.bias_block;
}

template <typename T, typename Space>
void Convolution<T, Space>::forward(DistTensor<T, Space>& src,
                                    const Param* weights, const Param* bias,
                                    DistTensor<T, Space>& dst) {
  Impl& s = impl();
  const bool has_bias = s.desc().bias == ConvBias::kAdd;
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(src, s.plan.src_layout, "src");
    s.check_layout(dst, s.plan.dst_layout, "dst");
    s.check_block(weights, s.plan.weights_block, "weights");
    require(bias != nullptr || !has_bias || s.plan.bias_block.empty(),
            ErrorKind::kInvalidArgument,
            "the convolution adds a bias but bias is null");
  });
  if (!has_bias) bias = nullptr;
  s.gathered_dy = nullptr;
  // The tensors the pieces read and write.
  DistTensor<T, Space>& x = s.x_full ? *s.x_full : src;
  T* y = s.y_full ? s.y_full->buffer().data() : dst.buffer().data();
  if (s.x_gather) {
    s.timed(
        [&] { s.x_gather->allgather(src.buffer().data(), x.buffer().data()); });
    s.gathered_x = &src;
  }
  const Param* piece_bias = s.y_sum ? nullptr : bias;  // partial sums: later
  s.overlapped(
      s.x_halo.value(), x, s.plan.forward_early, s.forward_early,
      s.plan.forward_late, s.forward_late,
      [&](const ConvPiece& p, const std::optional<typename Impl::Kernel>& k) {
        s.run_forward(p, k, x.buffer().data(), weights, piece_bias, y);
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
    if (bias != nullptr)
      Impl::Backend::add_per_channel(s.context, dst.interior(), bias);
  }
}

template <typename T, typename Space>
void Convolution<T, Space>::backward_data(DistTensor<T, Space>& diff_dst,
                                          const Param* weights,
                                          DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(diff_dst, s.plan.diff_dst_layout, "diff_dst");
    s.check_layout(diff_src, s.plan.diff_src_layout, "diff_src");
    s.check_block(weights, s.plan.weights_block, "weights");
  });
  if (s.dy_gather) s.gather_diff_dst(diff_dst);
  DistTensor<T, Space>& dy = s.dy_full ? *s.dy_full : diff_dst;
  // The input gradient of this rank's channels, before folding.
  DistTensor<T, Space>& own = s.dx_folded ? *s.dx_folded : diff_src;
  T* dx = s.dx_full ? s.dx_full->buffer().data() : own.buffer().data();
  s.overlapped(
      s.dy_halo.value(), dy, s.plan.data_early, s.data_early, s.plan.data_late,
      s.data_late,
      [&](const ConvPiece& p, const std::optional<typename Impl::Kernel>& k) {
        s.run_data(p, k, dy.buffer().data(), weights, dx);
        s.grads->poke();
      });
  if (s.dx_sum) {
    s.timed([&] { s.dx_sum->reduce_scatter(dx, own.buffer().data()); });
  }
  if (s.dx_fold) {
    s.stats.halo_wait_s += s.dx_fold->exchange(
        own, {HaloDirection::kReverse, HaloReduction::kSum});
    Impl::Backend::copy(s.context, own.interior(), diff_src.interior());
  }
}

template <typename T, typename Space>
void Convolution<T, Space>::backward_weights(
    const DistTensor<T, Space>& src, const DistTensor<T, Space>& diff_dst,
    Param* diff_weights, Param* diff_bias) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    s.check_layout(src, s.plan.src_layout, "src");
    s.check_layout(diff_dst, s.plan.diff_dst_layout, "diff_dst");
    s.check_block(diff_weights, s.plan.weights_block, "diff_weights");
    require(diff_bias != nullptr || s.desc().bias != ConvBias::kAdd ||
                s.plan.bias_block.empty(),
            ErrorKind::kInvalidArgument,
            "the convolution adds a bias but diff_bias is null");
    require(!s.x_gather || s.gathered_x == &src, ErrorKind::kState,
            "backward_weights reads the input channels forward() gathered: "
            "call forward() on this src first (channel parallelism that "
            "gathers the input)");
  });
  if (s.dy_gather) s.gather_diff_dst(diff_dst);
  s.grads->zero();
  Param* db = s.grads->bias();
  const ConvPiece& p = s.plan.weights_piece;
  const T* x = s.x_full ? s.x_full->buffer().data() : src.buffer().data();
  const T* dy =
      s.dy_full ? s.dy_full->buffer().data() : diff_dst.buffer().data();
  // With every filter gathered, the bias gradient is the own filters' sum.
  Param* kernel_db = s.dy_full ? nullptr : db;
  const StridedView<const T, Space> dd =
      s.plan.dy_buf.template view<Space>(dy, p.out_local);
  if (s.weights_kernel) {
    s.weights_kernel->backward_weights(
        s.plan.x_buf.template view<Space>(x, p.in_local), dd,
        s.grads->weights(), kernel_db);
  } else if (kernel_db != nullptr) {  // outputs that read padding only
    Impl::Backend::sum_per_channel(s.context, dd, kernel_db);
  }
  if (s.dy_full && db != nullptr) {
    Impl::Backend::sum_per_channel(s.context, diff_dst.interior(), db);
  }
  s.grads->start(diff_weights, diff_bias);
}

template <typename T, typename Space>
void Convolution<T, Space>::wait_gradients() {
  Impl& s = impl();
  s.stats.allreduce_wait_s += s.grads->wait();
}

template <typename T, typename Space>
std::string Convolution<T, Space>::describe() const {
  const Impl& s = impl();
  std::string out = s.plan.describe_channels();
  auto lines = [&](const std::vector<ConvPiece>& pieces,
                   const typename Impl::Kernels& kernels) {
    for (size_t i = 0; i < pieces.size(); ++i) {
      out += internal::describe_run(pieces[i], kernels[i]);
    }
  };
  lines(s.plan.forward_early, s.forward_early);
  lines(s.plan.forward_late, s.forward_late);
  lines(s.plan.data_early, s.data_early);
  lines(s.plan.data_late, s.data_late);
  return out + internal::describe_run(s.plan.weights_piece, s.weights_kernel);
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_CONVOLUTION_IMPL_H_
