#include "layers/adaptive_pool.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "kernels/local_adaptive_pool.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"

namespace distconv {
namespace {

using internal::check_mpi;

// The MPI op combining MaxCandidate arrays (sent as 16-byte elements).
void combine_candidates(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const MaxCandidate*>(in);
  auto* b = static_cast<MaxCandidate*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = better(a[i], b[i]);
}

}  // namespace

template <typename T>
struct AdaptivePooling<T>::Impl {
  const ProcessGrid* grid;
  AdaptivePoolPlan plan;
  internal::OwnedComm set;
  MPI_Datatype candidate_type = MPI_DATATYPE_NULL;
  MPI_Op combine = MPI_OP_NULL;
  // The shard's samples and channels: their whole output, and for max
  // pooling the maxima's indices from the last forward.
  std::vector<double> whole;
  std::vector<MaxCandidate> candidates;
  std::vector<std::int64_t> argmax;
  bool forward_ran = false;

  Impl(const ProcessGrid& g, AdaptivePoolPlan p)
      : grid(&g), plan(std::move(p)), set(g.comm(), color(g), g.rank()) {
    check_mpi(MPI_Type_contiguous(sizeof(MaxCandidate), MPI_BYTE,
                                  &candidate_type),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&candidate_type), "MPI_Type_commit");
    check_mpi(MPI_Op_create(&combine_candidates, 1, &combine),
              "MPI_Op_create");
  }
  ~Impl() {
    if (combine != MPI_OP_NULL) MPI_Op_free(&combine);
    if (candidate_type != MPI_DATATYPE_NULL) MPI_Type_free(&candidate_type);
  }

  static int color(const ProcessGrid& g) {
    const Shape c = g.coord();
    return static_cast<int>(c[0] * g.shape()[1] + c[1]);
  }

  Box shard() const { return plan.src_layout.shard(plan.rank); }
  Shape spatial(const Shape& s) const {
    Shape out = Shape::filled(s.ndims() - 2, 0);
    for (int d = 2; d < s.ndims(); ++d) out[d - 2] = s[d];
    return out;
  }
  Shape lower() const { return spatial(shard().lower); }
  Shape in() const { return spatial(plan.src_layout.distribution().global_shape()); }
  Index entries() const { return shard().extent[0] * shard().extent[1] * plan.outputs; }

  void allreduce(void* data, int count, MPI_Datatype type, MPI_Op op) {
    if (!plan.communicates() || count == 0) return;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, data, count, type, op, set.get()),
              "MPI_Allreduce");
  }

  // Calls fn(cell, whole-output entry) for the output shard's cells
  // (Tensor: DistTensor<T> or const DistTensor<T>).
  template <typename Tensor, typename Fn>
  void each_output(Tensor& dst, Fn fn) const {
    const Box own = plan.dst_layout.shard(plan.rank);
    const Shape size = plan.desc.size;
    const Index ch = own.extent[1];
    dst.interior().for_each([&](const Shape& i, auto& v) {
      Index o = 0;
      for (int d = 2; d < i.ndims(); ++d) o = o * size[d - 2] + i[d] + own.lower[d];
      fn(v, (i[0] * ch + i[1]) * plan.outputs + o);
    });
  }
};

template <typename T>
AdaptivePooling<T>::AdaptivePooling(const ProcessGrid& grid,
                                    const AdaptivePoolDesc& desc,
                                    const Distribution& src) {
  AdaptivePoolPlan plan = internal::plan_collectively(grid, [&] {
    internal::check_grid(src, grid.shape(), "input");
    return plan_adaptive_pool(desc, src, grid.rank());
  });
  internal::check_given_plan(
      grid, plan.src_layout.distribution(), plan.rank,
      internal::layer_fingerprint<T, HostSpace>(plan));
  impl_ = internal::Pimpl<Impl>::make("adaptive pooling", grid,
                                      std::move(plan));
}

template <typename T>
const AdaptivePoolPlan& AdaptivePooling<T>::plan() const {
  return impl().plan;
}
template <typename T>
const HaloLayout& AdaptivePooling<T>::src_layout() const {
  return impl().plan.src_layout;
}
template <typename T>
const HaloLayout& AdaptivePooling<T>::dst_layout() const {
  return impl().plan.dst_layout;
}

template <typename T>
void AdaptivePooling<T>::forward(const DistTensor<T>& src,
                                 DistTensor<T>& dst) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    internal::check_plan_layout(src.layout(), s.plan.src_layout, "src",
                                "adaptive pooling");
    internal::check_plan_layout(dst.layout(), s.plan.dst_layout, "dst",
                                "adaptive pooling");
  });
  const Index n = s.entries();
  if (s.plan.desc.kind == AdaptivePoolKind::kAverage) {
    s.whole.resize(static_cast<size_t>(n));
    LocalAdaptivePool<T>::sums(src.interior(), s.lower(), s.in(),
                               s.plan.desc.size, s.whole.data());
    s.allreduce(s.whole.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM);
    // Each output's window cell count, the same for every (n, c).
    std::vector<double> cells(static_cast<size_t>(s.plan.outputs), 1.0);
    const Shape in = s.in(), size = s.plan.desc.size;
    for (Index o = 0; o < s.plan.outputs; ++o) {
      Index rest = o;
      for (int d = size.ndims() - 1; d >= 0; --d) {
        const auto w = AdaptivePoolDesc::window(in[d], size[d], rest % size[d]);
        cells[o] *= static_cast<double>(w.second - w.first);
        rest /= size[d];
      }
    }
    s.each_output(dst, [&](T& v, Index e) {
      v = T(s.whole[e] / cells[e % s.plan.outputs]);
    });
  } else {
    s.candidates.resize(static_cast<size_t>(n));
    LocalAdaptivePool<T>::maxima(src.interior(), s.lower(), s.in(),
                                 s.plan.desc.size, s.candidates.data());
    s.allreduce(s.candidates.data(), static_cast<int>(n), s.candidate_type,
                s.combine);
    s.argmax.resize(static_cast<size_t>(n));
    for (Index e = 0; e < n; ++e) s.argmax[e] = s.candidates[e].index;
    s.each_output(dst, [&](T& v, Index e) { v = T(s.candidates[e].value); });
  }
  s.forward_ran = true;
}

template <typename T>
void AdaptivePooling<T>::backward(const DistTensor<T>& diff_dst,
                                  DistTensor<T>& diff_src) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    require(s.forward_ran || s.plan.desc.kind == AdaptivePoolKind::kAverage,
            ErrorKind::kState,
            "adaptive max pooling backward before any forward");
    internal::check_plan_layout(diff_dst.layout(), s.plan.dst_layout,
                                "diff_dst", "adaptive pooling");
    internal::check_plan_layout(diff_src.layout(), s.plan.src_layout,
                                "diff_src", "adaptive pooling");
  });
  const Index n = s.entries();
  std::vector<double> dy(static_cast<size_t>(n), 0.0);
  s.each_output(diff_dst, [&](const T& v, Index e) { dy[e] = double(v); });
  s.allreduce(dy.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM);
  if (s.plan.desc.kind == AdaptivePoolKind::kAverage) {
    LocalAdaptivePool<T>::average_backward(dy.data(), s.lower(), s.in(),
                                           s.plan.desc.size,
                                           diff_src.interior());
  } else {
    LocalAdaptivePool<T>::max_backward(dy.data(), s.argmax.data(), s.lower(),
                                       s.in(), s.plan.desc.size,
                                       diff_src.interior());
  }
}

template <typename T>
std::string AdaptivePooling<T>::describe() const {
  return impl().plan.describe();
}

#define DISTCONV_INSTANTIATE(T) template class AdaptivePooling<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
