// Internal: the pooling layer's executor, Pooling<T, Space> (see
// layers/pooling.h), written once for every memory space. The plan's
// leaves run the space's kernel for each PoolKernelCall
// (layers/internal/space_kernel.h), with the interface below: LocalPool
// in host memory (kernels/local_pool.h), CudaPool on the GPU
// (kernels/cuda/pool.h). In host memory a measured kernel choice first
// sets the plan's calls to the implementations the ranks agree on after
// timing them (choose_pool_impls, collective; layers/pooling.cc).
//
// The orchestration (checks on every rank, the halo exchange before the
// kernel forward, the reverse exchange summing halo contributions home
// after it backward) is this file's, the same for every space; reading
// in place (ConvInput::kInPlace: pieces, frames) is host memory's only.
// Included by the .cc that specialises SpaceKernel for a space and
// instantiates the layer for it: layers/pooling.cc (host),
// layers/device_pooling.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_POOLING_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_POOLING_IMPL_H_

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "kernels/space_ops.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"
#include "layers/internal/space_kernel.h"
#include "layers/internal/window_frames.h"
#include "layers/pooling.h"

namespace distconv {
namespace internal {

template <>
struct KernelInterface<PoolKernelCall> {
  template <typename K, typename T, typename Space>
  // forward(src, dst); backward(src, diff_dst, diff_src); what runs them
  using passes =
      decltype(std::declval<ForwardBackward<K, T, Space>>(),
               std::string(std::declval<const K&>().implementation()));
};

// Host memory: each of the plan's kernel calls set to the implementation
// the ranks agree on, from the cache of `timing` or timed (collective over
// comm).
template <typename T>
void choose_pool_impls(MPI_Comm comm, PoolPlan& plan,
                       const PoolImplSearchOptions& timing);

}  // namespace internal

// The resources a plan runs on: the halo exchange (forward on src or its
// frame, reverse on diff_src or its frame) and the local kernels (one over
// the window; in place, one per piece); and the state between passes.
template <typename T, typename Space>
struct Pooling<T, Space>::Impl {
  using Kernel = internal::SpaceKernelOf<PoolKernelCall, T, Space>;
  using Tensor = DistTensor<T, Space>;
  static constexpr bool kHost = std::is_same_v<Space, HostSpace>;

  Exec<Space> exec;
  const ProcessGrid* grid;
  PoolPlan plan;
  HaloExchange<T, Space> halo;
  std::optional<Kernel> kernel;  // none: no outputs here, or in place
  std::vector<Kernel> pieces;    // in place: the pieces' kernels
  std::vector<T> scratch;        // in place: a boundary piece's gradient
  bool forward_ran = false;
  PoolStats stats;

  Impl(const ProcessGrid& g, PoolPlan p, const HaloSetupOptions& config,
       const PoolImplSearchOptions& timing, const Exec<Space>& e)
      : exec(e),
        grid(&g),
        plan(std::move(p)),
        halo(g, plan.src_layout(), config, e) {
    if (plan.search == ConvImplSearch::kMeasured) {
      require(kHost, ErrorKind::kUnsupported,
              "pooling: a measured kernel choice is for host memory "
              "(device memory runs its CUDA kernels)");
      if constexpr (kHost)
        internal::choose_pool_impls<T>(g.comm(), plan, timing);
    }
    if (plan.in_place()) {
      require(kHost, ErrorKind::kUnsupported,
              "pooling reads its input in place (ConvInput::kInPlace) in "
              "host memory only; plan it with ConvInput::kHaloBuffer");
      for (const PoolKernelCall& k : plan.piece_kernels) {
        pieces.push_back(internal::make_kernel<T>(exec, k));
      }
    } else if (const auto& k = plan.kernel) {
      kernel.emplace(internal::make_kernel<T>(exec, *k));
    }
  }

  void check_layout(const Tensor& t, const HaloLayout& want,
                    const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "pooling");
  }
  void check_backward_order() const {
    require(forward_ran || plan.desc.kind != PoolKind::kMax, ErrorKind::kState,
            "max pooling's backward needs a forward first (it sends each "
            "gradient to the maximum forward found)");
  }

  // In place, forward: the edges into the frame, its halos exchanged while
  // the interior runs, then the boundary pieces.
  void forward_in_place(const Tensor& src, Tensor& frame, Tensor& dst) {
    if constexpr (kHost) {
      const WindowFrames& f = *plan.frames;
      internal::fill_edges(f, src, frame);
      halo.start(frame);
      f.for_pieces(false, [&](size_t i, const WindowPiece& p) {
        pieces[i].forward(src.buffer().subview(p.in_local),
                          dst.view(p.out_local));
      });
      stats.halo_wait_s += halo.wait();
      f.for_pieces(true, [&](size_t i, const WindowPiece& p) {
        pieces[i].forward(frame.buffer().subview(p.in_local),
                          dst.view(p.out_local));
      });
    }
  }

  // In place, backward: the boundary pieces' gradients added into the
  // frame, sent home by the reverse exchange while the interior writes
  // the shard, then the frame's edges added to the shard.
  void backward_in_place(const Tensor& src, const Tensor& frame,
                         const Tensor& diff_dst, Tensor& diff_src,
                         Tensor& diff_frame) {
    if constexpr (kHost) {
      const WindowFrames& f = *plan.frames;
      internal::add_boundary_pieces(
          f, scratch, diff_frame,
          [&](size_t i, const WindowPiece& p, const StridedView<T>& part) {
            pieces[i].backward(frame.buffer().subview(p.in_local),
                               diff_dst.buffer().subview(p.out_local), part);
          });
      halo.start(diff_frame, {HaloDirection::kReverse, HaloReduction::kSum});
      f.for_pieces(false, [&](size_t i, const WindowPiece& p) {
        pieces[i].backward(src.buffer().subview(p.in_local),
                           diff_dst.buffer().subview(p.out_local),
                           diff_src.view(p.in_local));
      });
      internal::zero_rest(f, diff_src);
      stats.halo_wait_s += halo.wait();
      internal::add_edges(f, diff_frame, diff_src);
    }
  }
};

template <typename T, typename Space>
Pooling<T, Space>::Pooling(const ProcessGrid& grid, const PoolDesc& desc,
                           const Distribution& src,
                           const PoolingOptions& options,
                           const Exec<Space>& exec)
    : Pooling(grid,
              internal::plan_collectively(
                  grid,
                  [&] {
                    internal::check_grid(src, grid.shape(), "input");
                    return plan_pooling(desc, src, grid.rank(), options);
                  }),
              options.halo, options.timing, exec) {}

template <typename T, typename Space>
Pooling<T, Space>::Pooling(const ProcessGrid& grid, PoolPlan plan,
                           const HaloSetupOptions& halo,
                           const PoolImplSearchOptions& timing,
                           const Exec<Space>& exec) {
  internal::check_given_plan(grid, plan.src_layout().distribution(), plan.rank,
                             internal::layer_fingerprint<T, Space>(plan));
  impl_ = internal::Pimpl<Impl>::make("pooling", grid, std::move(plan), halo,
                                      timing, exec);
}

template <typename T, typename Space>
const PoolPlan& Pooling<T, Space>::plan() const {
  return impl().plan;
}
template <typename T, typename Space>
const PoolDesc& Pooling<T, Space>::desc() const {
  return impl().plan.desc;
}
template <typename T, typename Space>
const ConvGeometry& Pooling<T, Space>::geometry() const {
  return impl().plan.geometry;
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::src_layout() const {
  return impl().plan.src_layout();
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::diff_dst_layout() const {
  return impl().plan.dst_layout();
}
template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::diff_src_layout() const {
  return impl().plan.src_layout();
}

template <typename T, typename Space>
const HaloLayout& Pooling<T, Space>::shard_layout() const {
  const Impl& s = impl();
  require(s.plan.in_place(), ErrorKind::kState,
          "shard_layout(): the pooling was not planned to read in place "
          "(ConvInput::kInPlace)");
  return s.plan.frames->shard;
}

template <typename T, typename Space>
const PoolStats& Pooling<T, Space>::stats() const {
  return impl().stats;
}
template <typename T, typename Space>
void Pooling<T, Space>::reset_stats() {
  impl().stats = PoolStats{};
}

template <typename T, typename Space>
void Pooling<T, Space>::forward(DistTensor<T, Space>& src,
                                DistTensor<T, Space>& dst) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), false, "pooling");
    s.check_layout(src, w.haloed, "src");
    s.check_layout(dst, w.plain, "dst");
  });
  s.stats.halo_wait_s += s.halo.exchange(src, {});
  if (s.kernel) {
    s.kernel->forward(src.view(w.haloed_local), dst.view(w.plain_local));
  }
  s.forward_ran = true;
}

template <typename T, typename Space>
void Pooling<T, Space>::backward(const DistTensor<T, Space>& src,
                                 const DistTensor<T, Space>& diff_dst,
                                 DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  const WindowPlan& w = s.plan.window;
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), false, "pooling");
    s.check_layout(src, w.haloed, "src");
    s.check_layout(diff_dst, w.plain, "diff_dst");
    s.check_layout(diff_src, w.haloed, "diff_src");
    s.check_backward_order();
  });
  if (w.zero_first) {
    zero<T>(s.exec, diff_src.buffer());
  }
  if (s.kernel) {
    s.kernel->backward(src.buffer().subview(w.haloed_local),
                       diff_dst.buffer().subview(w.plain_local),
                       diff_src.view(w.haloed_local));
  }
  s.stats.halo_wait_s +=
      s.halo.exchange(diff_src, {HaloDirection::kReverse, HaloReduction::kSum});
}

template <typename T, typename Space>
void Pooling<T, Space>::forward(const DistTensor<T, Space>& src,
                                DistTensor<T, Space>& src_frame,
                                DistTensor<T, Space>& dst) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), true, "pooling");
    s.check_layout(src, s.plan.frames->shard, "src");
    s.check_layout(src_frame, s.plan.src_layout(), "src_frame");
    s.check_layout(dst, s.plan.dst_layout(), "dst");
  });
  s.forward_in_place(src, src_frame, dst);
  s.forward_ran = true;
}

template <typename T, typename Space>
void Pooling<T, Space>::backward(const DistTensor<T, Space>& src,
                                 const DistTensor<T, Space>& src_frame,
                                 const DistTensor<T, Space>& diff_dst,
                                 DistTensor<T, Space>& diff_src,
                                 DistTensor<T, Space>& diff_src_frame) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), true, "pooling");
    s.check_layout(src, s.plan.frames->shard, "src");
    s.check_layout(src_frame, s.plan.src_layout(), "src_frame");
    s.check_layout(diff_dst, s.plan.dst_layout(), "diff_dst");
    s.check_layout(diff_src, s.plan.frames->shard, "diff_src");
    s.check_layout(diff_src_frame, s.plan.src_layout(), "diff_src_frame");
    s.check_backward_order();
  });
  s.backward_in_place(src, src_frame, diff_dst, diff_src, diff_src_frame);
}

template <typename T, typename Space>
std::string Pooling<T, Space>::describe() const {
  const Impl& s = impl();
  if (!s.plan.in_place()) {
    return s.plan.describe(s.kernel ? s.kernel->implementation() : "");
  }
  std::string out;
  for (size_t i = 0; i < s.pieces.size(); ++i) {
    const WindowPiece& p = s.plan.frames->pieces[i];
    PoolPlan one = s.plan;
    one.window.window = p.window;
    out += (p.reads_frame ? "boundary " : "interior ") +
           one.describe(s.pieces[i].implementation());
  }
  return out.empty() ? s.plan.describe("") : out;
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_POOLING_IMPL_H_
