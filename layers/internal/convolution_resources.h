// Internal: the state of the convolution's executor,
// Convolution<T, Space>::Impl (layers/internal/convolution_impl.h): the
// resources a plan runs on, in every memory space, and the passes over
// them.
#ifndef DISTCONV_LAYERS_INTERNAL_CONVOLUTION_RESOURCES_H_
#define DISTCONV_LAYERS_INTERNAL_CONVOLUTION_RESOURCES_H_

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "kernels/space_ops.h"
#include "layers/convolution.h"
#include "layers/internal/conv_kernels.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"
#include "layers/internal/space_kernel.h"

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
  using Comms = internal::ConvComms<T, Space>;
  using Kernel = internal::SpaceKernelOf<ConvKernelCall, T, Space>;
  using Kernels = std::vector<std::optional<Kernel>>;
  using P = Compute<T>;  // weights, bias, gradients

  // First, so that it outlives the kernels (the GPU's share its cuDNN
  // handle and workspace).
  Exec<Space> exec;
  const ProcessGrid* grid;
  ConvPlan plan;
  GpuConvOptions gpu;  // the GPU's cuDNN kernels'
  Comms comms;
  // Channel parallelism only: the ranks sharing this rank's channel
  // coordinate; the channel group as a pc x pf grid; the tensors holding
  // a member's channel block (x, dx) and filter block (y, dy), the
  // collectives filling and summing them, and a piece of y or dy on its
  // way between members.
  std::optional<ProcessGrid> slice, members;
  std::optional<DistTensor<T, Space>> x_full, y_full, dy_full, dx_full;
  std::optional<typename Comms::Channels> x_gather, y_sum, dy_gather, dx_sum;
  typename Comms::Array y_piece, dy_piece;
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
  Kernels weights_early, weights_late;
  std::optional<typename Comms::Grads> grads;  // weights, then bias
  ConvStats stats;

  Impl(const ProcessGrid& g, ConvPlan p, const HaloSetupOptions& halo,
       const GpuConvOptions& gpu_options, const CpuConvOptions& cpu,
       const Exec<Space>& e)
      : exec(e),
        grid(&g),
        plan(std::move(p)),
        gpu(gpu_options),
        comms(e, halo) {
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
                   x_full ? x_full->layout() : plan.src_layout, halo, exec);
    dy_halo.emplace(dy_full ? *slice : g,
                    dy_full ? dy_full->layout() : plan.diff_dst_layout, halo,
                    exec);
    if (plan.diff_src_folded) {
      dx_folded.emplace(g, *plan.diff_src_folded);
      dx_fold.emplace(g, *plan.diff_src_folded, halo, exec);
    }
    grads.emplace(
        comms, g.slice(1), plan.weights_block.extent.volume(),
        desc().bias == ConvBias::kAdd ? plan.bias_block.extent.volume() : 0);
    // The implementations to run (the host's measured search: collective),
    // then the kernels, then the ranks' agreement on the GPU's choices.
    std::vector<ConvKernelCall*> calls;
    for (std::vector<ConvPiece>* ps :
         {&plan.weights_early, &plan.weights_late, &plan.forward_early,
          &plan.forward_late, &plan.data_early, &plan.data_late}) {
      for (ConvPiece& piece : *ps) {
        if (piece.kernel) calls.push_back(&*piece.kernel);
      }
    }
    KernelCache own;  // measured, no cache of the caller's: this layer's
    internal::choose_conv_impls<T>(exec, g.comm(), calls, cpu, own);
    forward_early = make_kernels(plan.forward_early);
    forward_late = make_kernels(plan.forward_late);
    data_early = make_kernels(plan.data_early);
    data_late = make_kernels(plan.data_late);
    weights_early = make_kernels(plan.weights_early);
    weights_late = make_kernels(plan.weights_late);
    std::vector<std::optional<Kernel>*> all;
    for (Kernels* ks : {&weights_early, &weights_late, &forward_early,
                        &forward_late, &data_early, &data_late}) {
      for (std::optional<Kernel>& k : *ks) all.push_back(&k);
    }
    internal::agree_conv_kernels(exec, g.comm(), all);
  }

  // The local kernels of `pieces`, in order.
  Kernels make_kernels(const std::vector<ConvPiece>& pieces) {
    Kernels kernels;
    kernels.reserve(pieces.size());
    for (const ConvPiece& p : pieces) {
      std::optional<Kernel> k;
      if (p.kernel) k.emplace(internal::make_kernel<T>(exec, *p.kernel, gpu));
      kernels.push_back(std::move(k));
    }
    return kernels;
  }

  const ConvDesc& desc() const { return plan.desc(); }

  // The tensor and collective of a full-channel tensor of the plan.
  void full_tensor(const std::optional<ConvChannelTensor>& planned,
                   std::optional<DistTensor<T, Space>>& tensor,
                   std::optional<typename Comms::Channels>& coll) {
    if (!planned) return;
    tensor.emplace(*slice, planned->layout);
    const Index n = planned->block.extent();
    coll.emplace(comms, members->along(planned->members_dim), planned->block,
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

  // x: the buffer the piece reads (`in`: x_buf, or x_shard in place).
  void run_forward(const ConvPiece& p, const std::optional<Kernel>& k,
                   const ConvBuffer& in, const T* x, const P* w, const P* b,
                   T* y) const {
    if (p.window.dst.empty()) return;
    const StridedView<T, Space> out =
        plan.y_buf.template view<Space>(y, p.out_local);
    if (!k) {  // the outputs read padding (or no channel) only
      fill_per_channel<T>(exec, out, b);
      return;
    }
    k->forward(in.template view<Space>(x, p.in_local), w, b, out);
  }

  // dy: the buffer the piece reads (`in`: dy_buf, or dy_shard in place).
  void run_data(const ConvPiece& p, const std::optional<Kernel>& k,
                const ConvBuffer& in, const T* dy, const P* w, T* dx) const {
    if (p.zero_first) {
      zero<T>(exec, plan.dx_buf.template view<Space>(dx, p.target_local));
    }
    if (k) {
      k->backward_data(in.template view<Space>(dy, p.in_local), w,
                       plan.dx_buf.template view<Space>(dx, p.out_local));
    }
  }

  // Adds the piece's weight (and bias, when db) gradient; x from `x_in`,
  // dy from `dy_in`.
  void run_weights(const ConvPiece& p, const std::optional<Kernel>& k,
                   const ConvBuffer& x_in, const T* x, const ConvBuffer& dy_in,
                   const T* dy, P* dw, P* db) const {
    const StridedView<const T, Space> dd =
        dy_in.template view<Space>(dy, p.out_local);
    if (k) {
      k->backward_weights(x_in.template view<Space>(x, p.in_local), dd, dw,
                          db);
    } else if (db != nullptr) {  // outputs that read padding only
      sum_per_channel<T>(exec, dd, db);
    }
  }

  // kInPlace: copies the frame's boxes from the caller's shard `from`
  // (`shard`: its buffer) into `frame` (`buf`: the frame's buffer).
  void fill_frame(const std::vector<Box>& boxes, const ConvBuffer& shard,
                  const T* from, const ConvBuffer& buf, T* frame) const {
    const Shape shift = buf.box.lower - shard.box.lower;
    for (const Box& b : boxes) {
      copy<T>(exec, shard.template view<Space>(from, b.shifted(shift)),
              buf.template view<Space>(frame, b));
    }
  }

  // Runs the early pieces between start() and wait() of `halo` on `t`,
  // the late ones after: run(piece, kernel, early).
  template <typename Run>
  void overlapped(HaloExchange<T, Space>& halo, DistTensor<T, Space>& t,
                  const std::vector<ConvPiece>& early_pieces,
                  const Kernels& early,
                  const std::vector<ConvPiece>& late_pieces,
                  const Kernels& late, Run run) {
    halo.start(t);
    for (size_t i = 0; i < early.size(); ++i) {
      run(early_pieces[i], early[i], true);
    }
    stats.halo_wait_s += halo.wait();
    for (size_t i = 0; i < late.size(); ++i) {
      run(late_pieces[i], late[i], false);
    }
  }

  bool in_place() const { return plan.input == ConvInput::kInPlace; }
  // The layout of the input's shard read in place (no halos).
  HaloLayout src_shard_layout() const {
    return HaloLayout(plan.src_layout.distribution())
        .with_storage(plan.src_layout.storage_order());
  }
  // Checks, on every rank together, that the pass was called the way the
  // plan reads its tensor: with a frame in place, without one otherwise;
  // then the tensor's layouts (`haloed`: the layout with halos).
  void check_input(const DistTensor<T, Space>& t,
                   const DistTensor<T, Space>* frame, const HaloLayout& haloed,
                   const HaloLayout& shard, const char* what,
                   const char* frame_what) const {
    if (frame != nullptr) {
      require(in_place(), ErrorKind::kInvalidArgument, "the convolution ",
              "was planned to read ", what, " from a buffer with halos ",
              "(ConvInput::kHaloBuffer); this pass takes a ", frame_what,
              " with it only when planned with ConvInput::kInPlace");
      check_layout(t, shard, what);
      check_layout(*frame, haloed, frame_what);
    } else {
      require(!in_place(), ErrorKind::kInvalidArgument, "the convolution ",
              "was planned to read ", what, " in place (ConvInput::kInPlace): ",
              "pass its shard and a ", frame_what);
      check_layout(t, haloed, what);
    }
  }

  void check_forward(const DistTensor<T, Space>& src,
                     const DistTensor<T, Space>* frame, const P* weights,
                     const P* bias, const DistTensor<T, Space>& dst) const {
    internal::run_collectively(grid->comm(), [&] {
      check_input(src, frame, plan.src_layout, src_shard_layout(), "src",
                  "src_frame");
      check_layout(dst, plan.dst_layout, "dst");
      check_block(weights, plan.weights_block, "weights");
      require(bias != nullptr || desc().bias != ConvBias::kAdd ||
                  plan.bias_block.empty(),
              ErrorKind::kInvalidArgument,
              "the convolution adds a bias but bias is null");
    });
  }

  void check_data(const DistTensor<T, Space>& diff_dst,
                  const DistTensor<T, Space>* frame, const P* weights,
                  const DistTensor<T, Space>& diff_src) const {
    internal::run_collectively(grid->comm(), [&] {
      check_input(diff_dst, frame, plan.diff_dst_layout, plan.dst_layout,
                  "diff_dst", "diff_dst_frame");
      check_layout(diff_src, plan.diff_src_layout, "diff_src");
      check_block(weights, plan.weights_block, "weights");
    });
  }

  void check_weights(const DistTensor<T, Space>& src,
                     const DistTensor<T, Space>* frame,
                     const DistTensor<T, Space>& diff_dst, const P* dw,
                     const P* db) const {
    internal::run_collectively(grid->comm(), [&] {
      check_input(src, frame, plan.src_layout, src_shard_layout(), "src",
                  "src_frame");
      check_layout(diff_dst,
                   in_place() ? plan.dst_layout : plan.diff_dst_layout,
                   "diff_dst");
      check_block(dw, plan.weights_block, "diff_weights");
      require(db != nullptr || desc().bias != ConvBias::kAdd ||
                  plan.bias_block.empty(),
              ErrorKind::kInvalidArgument,
              "the convolution adds a bias but diff_bias is null");
      require(!x_gather || gathered_x == &src, ErrorKind::kState,
              "backward_weights reads the input channels forward() "
              "gathered: call forward() on this src first (channel "
              "parallelism that gathers the input)");
    });
  }

  // framed: src, or in place the frame (`shard` the caller's shard).
  void forward(DistTensor<T, Space>& framed, const DistTensor<T, Space>* shard,
               const P* weights, const P* bias, DistTensor<T, Space>& dst) {
    if (desc().bias != ConvBias::kAdd) bias = nullptr;
    gathered_dy = nullptr;
    // The tensors the pieces read and write.
    DistTensor<T, Space>& x = x_full ? *x_full : framed;
    T* y = y_full ? y_full->buffer().data() : dst.buffer().data();
    if (x_gather) {
      timed([&] {
        x_gather->allgather(framed.buffer().data(), x.buffer().data());
      });
      gathered_x = &framed;
    }
    const T* early = x.buffer().data();
    if (shard != nullptr) {
      early = shard->buffer().data();
      fill_frame(plan.x_frame, plan.x_shard, early, plan.x_buf,
                 x.buffer().data());
    }
    const P* piece_bias = y_sum ? nullptr : bias;  // partial sums: later
    overlapped(*x_halo, x, plan.forward_early, forward_early,
               plan.forward_late, forward_late,
               [&](const ConvPiece& p, const std::optional<Kernel>& k,
                   bool is_early) {
                 if (is_early && shard != nullptr) {
                   run_forward(p, k, plan.x_shard, early, weights, piece_bias,
                               y);
                 } else {
                   run_forward(p, k, plan.x_buf, x.buffer().data(), weights,
                               piece_bias, y);
                 }
               });
    if (y_sum) {
      timed([&] {
        if (!plan.channels.transposed()) {
          y_sum->reduce_scatter(y, dst.buffer().data());
          return;
        }
        y_sum->reduce_scatter(y, y_piece.data());
        swap_piece(y_piece.data(), static_cast<Index>(y_piece.size()),
                   piece_owner(), dst.buffer().data(), dst.size(),
                   piece_maker());
      });
      if (bias != nullptr) {
        add_per_channel<T>(exec, dst.interior(), bias);
      }
    }
  }

  // framed: diff_dst, or in place its frame (`shard` the caller's shard).
  void backward_data(DistTensor<T, Space>& framed,
                     const DistTensor<T, Space>* shard, const P* weights,
                     DistTensor<T, Space>& diff_src) {
    if (dy_gather) gather_diff_dst(framed);
    DistTensor<T, Space>& dy = dy_full ? *dy_full : framed;
    // The input gradient of this rank's channels, before folding.
    DistTensor<T, Space>& own = dx_folded ? *dx_folded : diff_src;
    T* dx = dx_full ? dx_full->buffer().data() : own.buffer().data();
    const T* early = dy.buffer().data();
    if (shard != nullptr) {
      early = shard->buffer().data();
      fill_frame(plan.dy_frame, plan.dy_shard, early, plan.dy_buf,
                 dy.buffer().data());
    }
    overlapped(*dy_halo, dy, plan.data_early, data_early, plan.data_late,
               data_late,
               [&](const ConvPiece& p, const std::optional<Kernel>& k,
                   bool is_early) {
                 if (is_early && shard != nullptr) {
                   run_data(p, k, plan.dy_shard, early, weights, dx);
                 } else {
                   run_data(p, k, plan.dy_buf, dy.buffer().data(), weights,
                            dx);
                 }
                 grads->poke();
               });
    if (dx_sum) {
      timed([&] { dx_sum->reduce_scatter(dx, own.buffer().data()); });
    }
    if (dx_fold) {
      stats.halo_wait_s += dx_fold->exchange(
          own, {HaloDirection::kReverse, HaloReduction::kSum});
      copy<T>(exec, own.interior(), diff_src.interior());
    }
  }

  // framed: src, or in place its frame (`shard` the caller's shard);
  // diff_dst: in place its shard.
  void backward_weights(const DistTensor<T, Space>& framed,
                        const DistTensor<T, Space>* shard,
                        const DistTensor<T, Space>& diff_dst, P* diff_weights,
                        P* diff_bias) {
    if (dy_gather) gather_diff_dst(diff_dst);
    grads->zero();
    P* db = grads->bias();
    const T* x = x_full ? x_full->buffer().data() : framed.buffer().data();
    const T* dy =
        dy_full ? dy_full->buffer().data() : diff_dst.buffer().data();
    const ConvBuffer& dy_in = in_place() ? plan.dy_shard : plan.dy_buf;
    // With every filter gathered, the bias gradient is the own filters'
    // sum.
    P* kernel_db = dy_full ? nullptr : db;
    for (size_t i = 0; i < weights_early.size(); ++i) {
      if (shard != nullptr) {
        run_weights(plan.weights_early[i], weights_early[i], plan.x_shard,
                    shard->buffer().data(), dy_in, dy, grads->weights(),
                    kernel_db);
      } else {
        run_weights(plan.weights_early[i], weights_early[i], plan.x_buf, x,
                    dy_in, dy, grads->weights(), kernel_db);
      }
    }
    for (size_t i = 0; i < weights_late.size(); ++i) {
      run_weights(plan.weights_late[i], weights_late[i], plan.x_buf, x, dy_in,
                  dy, grads->weights(), kernel_db);
    }
    if (dy_full && db != nullptr) {
      sum_per_channel<T>(exec, diff_dst.interior(), db);
    }
    grads->start(diff_weights, diff_bias);
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
    sendrecv(exec, members->comm(), send, n_send, to, recv, n_recv, from);
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


}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_CONVOLUTION_RESOURCES_H_
