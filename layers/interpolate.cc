#include "layers/interpolate.h"

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_exchange.h"
#include "kernels/copy_view.h"
#include "kernels/local_interpolate.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"
#include "layers/internal/pointwise.h"
#include "layers/internal/window_frames.h"

namespace distconv {
namespace {

// A 16-bit input gradient is summed in fp32 (function templates, made only
// for the types that call them): a zeroed fp32 view over `copy` shaped like
// `v` (dense, channels-last, where the kernel's channel loops are vector
// code), written back with copy_view, each cell rounded once.
template <typename T>
StridedView<float> zeros_like(const StridedView<const T>& v,
                              std::vector<float>& copy) {
  copy.assign(static_cast<size_t>(v.size()), 0.0f);
  return StridedView<float>(
      copy.data(), v.extent(),
      dense_strides(v.extent(), StorageOrder::kChannelsLast));
}

}  // namespace

template <typename T>
struct Interpolate<T>::Impl {
  const ProcessGrid* grid;
  InterpolatePlan plan;
  HaloExchange<T> halo;
  // The input gradient's sums in Compute<T> (16-bit types: fp32), kept
  // between backward calls: LocalInterpolate::backward_into's scratch
  // (with buffers), or a zeroed fp32 copy of the frame (zeros_like, in
  // place).
  std::vector<Compute<T>> sums;

  Impl(const ProcessGrid& g, InterpolatePlan p, const HaloSetupOptions& h)
      : grid(&g), plan(std::move(p)), halo(g, plan.src_layout, h) {}

  void check(const DistTensor<T>& t, const HaloLayout& want,
             const char* what) const {
    internal::check_plan_layout(t.layout(), want, what, "linear interpolation");
  }

  // Each piece reading (reading_frame) the frame, or the shard:
  // fn(piece, the piece's output box).
  template <typename Fn>
  void for_pieces(bool reading_frame, Fn fn) const {
    for (const InterpolatePiece& p : plan.frames->pieces) {
      if (p.reads_frame == reading_frame) fn(p, p.out_local);
    }
  }

  // fn(slab) for each halo slab of this rank's src_layout() buffer (local
  // boxes, corners included, so they may overlap).
  template <typename Fn>
  void for_halo_slabs(Fn fn) const {
    const HaloLayout& l = plan.src_layout;
    for (int d = 2; d < l.ndims(); ++d) {
      for (Side side : {Side::kLower, Side::kUpper}) {
        const Box slab = l.halo_slab(grid->rank(), d, side);
        if (slab.volume() > 0) fn(slab);
      }
    }
  }
};

template <typename T>
Interpolate<T>::Interpolate(const ProcessGrid& grid,
                            const InterpolateDesc& desc,
                            const Distribution& src,
                            const InterpolateOptions& options) {
  InterpolatePlan plan = internal::plan_collectively(grid, [&] {
    internal::check_grid(src, grid.shape(), "input");
    return plan_interpolate(desc, src, grid.rank(), options.input);
  });
  internal::check_given_plan(grid, plan.src_layout.distribution(), plan.rank,
                             internal::layer_fingerprint<T, HostSpace>(plan));
  impl_ = internal::Pimpl<Impl>::make("linear interpolation", grid,
                                      std::move(plan), options.halo);
}

template <typename T>
const InterpolatePlan& Interpolate<T>::plan() const {
  return impl().plan;
}
template <typename T>
const HaloLayout& Interpolate<T>::src_layout() const {
  return impl().plan.src_layout;
}
template <typename T>
const HaloLayout& Interpolate<T>::dst_layout() const {
  return impl().plan.dst_layout;
}

template <typename T>
const HaloLayout& Interpolate<T>::shard_layout() const {
  return impl().plan.shard_layout();
}

template <typename T>
void Interpolate<T>::forward(DistTensor<T>& src, DistTensor<T>& dst) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), false, "linear interpolation");
    s.check(src, s.plan.src_layout, "src");
    s.check(dst, s.plan.dst_layout, "dst");
  });
  s.halo.exchange(src);
  if (dst.interior().size() == 0) return;
  LocalInterpolate<T>::forward(std::as_const(src).buffer(), s.plan.taps,
                               dst.interior());
}

template <typename T>
void Interpolate<T>::backward(const DistTensor<T>& diff_dst,
                              DistTensor<T>& diff_src) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), false, "linear interpolation");
    s.check(diff_dst, s.plan.dst_layout, "diff_dst");
    s.check(diff_src, s.plan.src_layout, "diff_src");
  });
  // Written over the whole buffer, each cell's sum rounded once.
  LocalInterpolate<T>::backward_into(diff_dst.interior(), s.plan.taps,
                                     diff_src.buffer(), s.sums);
  s.halo.exchange(diff_src, {HaloDirection::kReverse, HaloReduction::kSum});
}

// In place: the frame's edges filled and its halos exchanged while the
// interior reads the shard; then the boundary pieces read the frame.
template <typename T>
void Interpolate<T>::forward(const DistTensor<T>& src, DistTensor<T>& src_frame,
                             DistTensor<T>& dst) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), true, "linear interpolation");
    s.check(src, s.plan.frames->shard, "src");
    s.check(src_frame, s.plan.src_layout, "src_frame");
    s.check(dst, s.plan.dst_layout, "dst");
  });
  internal::fill_edges(*s.plan.frames, src, src_frame);
  s.halo.start(src_frame);
  s.for_pieces(false, [&](const InterpolatePiece& p, const Box& out) {
    LocalInterpolate<T>::forward(src.buffer(), p.taps, dst.view(out));
  });
  s.halo.wait();
  s.for_pieces(true, [&](const InterpolatePiece& p, const Box& out) {
    LocalInterpolate<T>::forward(std::as_const(src_frame).buffer(), p.taps,
                                 dst.view(out));
  });
}

// In place: the boundary pieces add into the gradient's frame, whose
// halos go home while the interior adds into the shard; then the frame's
// edges are added into the shard.
template <typename T>
void Interpolate<T>::backward(const DistTensor<T>& diff_dst,
                              DistTensor<T>& diff_src,
                              DistTensor<T>& diff_src_frame) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_frames(s.plan.in_place(), true, "linear interpolation");
    s.check(diff_dst, s.plan.dst_layout, "diff_dst");
    s.check(diff_src, s.plan.frames->shard, "diff_src");
    s.check(diff_src_frame, s.plan.src_layout, "diff_src_frame");
  });
  if constexpr (!kNarrow<T>) {
    const FrameBoxes& f = *s.plan.frames;
    internal::zero_frame(f, diff_src_frame);
    s.for_pieces(true, [&](const InterpolatePiece& p, const Box& out) {
      LocalInterpolate<T>::backward(diff_dst.buffer().subview(out), p.taps,
                                    diff_src_frame.buffer());
    });
    s.halo.start(diff_src_frame,
                 {HaloDirection::kReverse, HaloReduction::kSum});
    internal::zero(diff_src.buffer());
    s.for_pieces(false, [&](const InterpolatePiece& p, const Box& out) {
      LocalInterpolate<T>::backward(diff_dst.buffer().subview(out), p.taps,
                                    diff_src.buffer());
    });
    s.halo.wait();
    internal::add_edges(f, diff_src_frame, diff_src);
  } else {
    // Every piece adds into one fp32 copy of the frame's extent, rounded
    // once: its halo cells go home from the frame (whose edges stay zero),
    // its interior is the shard's gradient, to which the neighbours' sums
    // are then added.
    const FrameBoxes& f = *s.plan.frames;
    internal::zero_frame(f, diff_src_frame);
    const StridedView<float> dx =
        zeros_like(std::as_const(diff_src_frame).buffer(), s.sums);
    const Box inside = s.plan.src_layout.interior(diff_src_frame.part());
    s.for_pieces(true, [&](const InterpolatePiece& p, const Box& out) {
      LocalInterpolate<T>::backward(diff_dst.buffer().subview(out), p.taps, dx);
    });
    s.for_halo_slabs([&](const Box& slab) {
      copy_view<float, T>(dx.subview(slab), diff_src_frame.view(slab));
    });
    s.halo.start(diff_src_frame,
                 {HaloDirection::kReverse, HaloReduction::kSum});
    s.for_pieces(false, [&](const InterpolatePiece& p, const Box& out) {
      LocalInterpolate<T>::backward(diff_dst.buffer().subview(out), p.taps,
                                    dx.subview(inside));
    });
    copy_view<float, T>(dx.subview(inside), diff_src.buffer());
    s.halo.wait();
    internal::add_edges(f, diff_src_frame, diff_src);
  }
}

template <typename T>
std::string Interpolate<T>::describe() const {
  return impl().plan.describe();
}

#define DISTCONV_INSTANTIATE(T) template class Interpolate<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
