// Internal: the loss layer, Loss<T, Space> (layers/loss.h), written once
// for every memory space: the checks and the reductions over ranks (in
// double, on the host) are this file's. The per-cell passes over the
// interiors (kernels/channel_cells.h's cell functions) run the space's
// kernel for the layer's LossCellDesc (layers/internal/space_kernel.h),
// with the interface below: kernels/local_loss.h in host memory,
// kernels/cuda/loss.h on the GPU. Its sums are 2 * samples + 1 values,
// samples = x.extent()[0]: per sample n of x, [n] the sum of its cells'
// terms and [samples + n] their count; last, the count of bad class
// indices.
//
// Included by the .cc that specialises SpaceKernel for a space and
// instantiates the layer for it: layers/loss.cc (host),
// layers/device_loss.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_LOSS_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_LOSS_IMPL_H_

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/strided_view.h"
#include "kernels/channel_cells.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/space_kernel.h"
#include "layers/loss.h"

namespace distconv {
namespace internal {

// The passes for targets of class indices and of the prediction's type.
template <>
struct KernelInterface<LossCellDesc> {
  template <typename K, typename T, typename Space, typename Target>
  using for_target = decltype(
      // the sums over the cells of x and t
      std::vector<double>(std::declval<K&>().sums(
          LossTerms::kLossesAndCounts,
          std::declval<const StridedView<const T, Space>&>(),
          std::declval<const StridedView<const Target, Space>&>())),
      // dx = the gradient scaled by w
      std::declval<K&>().gradient(
          1.0, std::declval<const StridedView<const T, Space>&>(),
          std::declval<const StridedView<const Target, Space>&>(),
          std::declval<const StridedView<T, Space>&>()),
      // sums(kLossesAndCounts) and gradient(), the same values
      std::vector<double>(std::declval<K&>().sums_and_gradient(
          1.0, std::declval<const StridedView<const T, Space>&>(),
          std::declval<const StridedView<const Target, Space>&>(),
          std::declval<const StridedView<T, Space>&>())));
  template <typename K, typename T, typename Space>
  using passes =
      decltype(std::declval<for_target<K, T, Space, T>>(),
               std::declval<for_target<K, T, Space, std::int64_t>>());
};

inline void sum_over_ranks(std::vector<double>& values, MPI_Comm comm) {
  check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, values.data(),
                    static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, comm),
      "MPI_Allreduce");
}

inline double loss_reduced(LossReduction r, double sum, double count) {
  if (r == LossReduction::kSum) return sum;
  return count > 0 ? sum / count : 0.0;
}

}  // namespace internal

template <typename T, typename Space>
struct Loss<T, Space>::Impl {
  const ProcessGrid* grid;
  LossDesc desc;
  ShardPlan plan;
  const Distribution& prediction;
  const HaloLayout& prediction_layout;
  const HaloLayout& target_layout;
  Box shard;
  std::vector<double> sample_losses;
  internal::SpaceKernelOf<LossCellDesc, T, Space> kernel;
  LayerStats stats;  // allreduce_wait_s: in sum_over_ranks

  Impl(const ProcessGrid& g, const LossDesc& d, ShardPlan p,
       const Exec<Space>& exec)
      : grid(&g),
        desc(d),
        plan(std::move(p)),
        prediction(plan.layout("prediction").distribution()),
        prediction_layout(plan.layout("prediction")),
        target_layout(plan.layout("target")),
        shard(plan.shard("prediction")),
        sample_losses(shard.extent[0], 0.0),
        kernel(internal::make_kernel<T>(
            exec, loss_cell_desc(desc, prediction.global_shape()[1]))) {}

  // Sums `values` over `comm`, timed into stats.
  void sum_over_ranks(std::vector<double>& values, MPI_Comm comm) {
    const double start = MPI_Wtime();
    internal::sum_over_ranks(values, comm);
    stats.allreduce_wait_s += MPI_Wtime() - start;
  }

  void check_kind(bool indices, const char* pass) const {
    require(desc.takes_indices() == indices, ErrorKind::kInvalidArgument,
            to_string(desc.kind), " loss ", pass, " takes ",
            desc.takes_indices() ? "class indices (DistTensor<int64_t>)"
                                 : "a DistTensor of the prediction's type",
            " as its target");
  }

  template <typename U>
  void check(const DistTensor<U, Space>& t, const HaloLayout& want,
             const char* what) const {
    const Distribution& want_dist = want.distribution();
    require(t.layout().distribution() == want_dist, ErrorKind::kShapeMismatch,
            what, " tensor's distribution (global ", t.global_shape(),
            " over grid ", t.layout().distribution().grid_shape(),
            ") is not the loss's ", what, " distribution (global ",
            want_dist.global_shape(), " over grid ", want_dist.grid_shape(),
            ", in any layout)");
  }

  void require_valid_indices(double bad) const {
    require(bad == 0, ErrorKind::kInvalidArgument, "the target holds ",
            static_cast<long long>(bad), " class indices outside [0, ",
            prediction.global_shape()[1], ")",
            desc.ignore_index ? internal::str(" other than the ignore_index ",
                                              *desc.ignore_index)
                              : std::string());
  }

  template <typename Target>
  double forward(const DistTensor<T, Space>& xt,
                 const DistTensor<Target, Space>& tt) {
    internal::run_collectively(grid->comm(), [&] {
      check_kind(std::is_integral_v<Target>, "forward");
      check(xt, prediction_layout, "prediction");
      check(tt, target_layout, "target");
    });
    // Per sample: sums, then counts; then the count of bad indices.
    return reduced(
        kernel.sums(LossTerms::kLossesAndCounts, xt.interior(), tt.interior()));
  }

  // The loss from this rank's per-sample sums and counts (the kernel's
  // sums): sample_losses set, the total returned.
  double reduced(std::vector<double> local) {
    const Index samples = shard.extent[0];
    // Each sample's sum and count over the ranks sharing it ...
    sum_over_ranks(local, grid->sample_comm());
    // ... then over one rank per sample range.
    std::vector<double> total(3, 0.0);
    for (Index n = 0; n < samples; ++n) {
      total[0] += local[n];
      total[1] += local[samples + n];
    }
    total[2] = local[2 * samples];
    sum_over_ranks(total, grid->along(0));
    require_valid_indices(total[2]);
    for (Index n = 0; n < samples; ++n) {
      sample_losses[n] =
          internal::loss_reduced(desc.reduction, local[n], local[samples + n]);
    }
    return internal::loss_reduced(desc.reduction, total[0], total[1]);
  }

  // The factor kMean divides the gradient by (1 for kSum).
  template <typename Target>
  double gradient_scale(const DistTensor<T, Space>& xt,
                        const DistTensor<Target, Space>& tt) {
    const Shape& global = prediction.global_shape();
    double count = double(global.volume() / global[1]);  // cells
    if (desc.kind == LossKind::kMeanSquaredError) count *= double(global[1]);
    if (desc.takes_indices()) {
      // Data-dependent: the counted cells and the bad indices, globally.
      const Index samples = shard.extent[0];
      const std::vector<double> local =
          kernel.sums(LossTerms::kCountsOnly, xt.interior(), tt.interior());
      std::vector<double> both(2, 0.0);
      for (Index n = 0; n < samples; ++n) both[0] += local[samples + n];
      both[1] = local[2 * samples];
      sum_over_ranks(both, grid->comm());
      require_valid_indices(both[1]);
      count = both[0];
    }
    if (desc.reduction == LossReduction::kSum) return 1.0;
    return count > 0 ? 1.0 / count : 0.0;
  }

  template <typename Target>
  void backward(const DistTensor<T, Space>& xt,
                const DistTensor<Target, Space>& tt,
                DistTensor<T, Space>& dxt) {
    internal::run_collectively(grid->comm(), [&] {
      check_kind(std::is_integral_v<Target>, "backward");
      check(xt, prediction_layout, "prediction");
      check(tt, target_layout, "target");
      check(dxt, prediction_layout, "diff_prediction");
    });
    const double w = gradient_scale(xt, tt);
    kernel.gradient(w, xt.interior(), tt.interior(), dxt.interior());
  }

  // forward() and backward() in one pass over the cells. The gradient's
  // scale (and the indices' check) comes first, so bad input throws
  // before diff_prediction is written.
  template <typename Target>
  double forward_backward(const DistTensor<T, Space>& xt,
                          const DistTensor<Target, Space>& tt,
                          DistTensor<T, Space>& dxt) {
    internal::run_collectively(grid->comm(), [&] {
      check_kind(std::is_integral_v<Target>, "forward_backward");
      check(xt, prediction_layout, "prediction");
      check(tt, target_layout, "target");
      check(dxt, prediction_layout, "diff_prediction");
    });
    const double w = gradient_scale(xt, tt);
    return reduced(kernel.sums_and_gradient(w, xt.interior(), tt.interior(),
                                            dxt.interior()));
  }
};

template <typename T, typename Space>
Loss<T, Space>::Loss(const ProcessGrid& grid, const LossDesc& desc,
                     const Distribution& prediction, const Exec<Space>& exec) {
  desc.validate(prediction.global_shape());
  internal::check_grid(prediction, grid.shape(), "prediction");
  impl_ = internal::Pimpl<Impl>::make(
      "loss", grid, desc, plan_loss(desc, prediction, grid.rank()), exec);
}

template <typename T, typename Space>
Loss<T, Space>::Loss(const ProcessGrid& grid, const LossDesc& desc,
                     ShardPlan plan, const Exec<Space>& exec) {
  internal::check_given_shard_plan<T, Space>(grid, plan, [&] {
    return plan_loss(desc, plan.layout("prediction").distribution(), plan.rank);
  });
  impl_ =
      internal::Pimpl<Impl>::make("loss", grid, desc, std::move(plan), exec);
}

template <typename T, typename Space>
const ShardPlan& Loss<T, Space>::plan() const {
  return impl().plan;
}
template <typename T, typename Space>
const LossDesc& Loss<T, Space>::desc() const {
  return impl().desc;
}
template <typename T, typename Space>
const HaloLayout& Loss<T, Space>::prediction_layout() const {
  return impl().prediction_layout;
}
template <typename T, typename Space>
const HaloLayout& Loss<T, Space>::target_layout() const {
  return impl().target_layout;
}
template <typename T, typename Space>
const HaloLayout& Loss<T, Space>::diff_prediction_layout() const {
  return impl().prediction_layout;
}

template <typename T, typename Space>
double Loss<T, Space>::forward(const DistTensor<T, Space>& prediction,
                               const DistTensor<T, Space>& target) {
  return impl().forward(prediction, target);
}
template <typename T, typename Space>
double Loss<T, Space>::forward(const DistTensor<T, Space>& prediction,
                               const DistTensor<std::int64_t, Space>& target) {
  return impl().forward(prediction, target);
}
template <typename T, typename Space>
void Loss<T, Space>::backward(const DistTensor<T, Space>& prediction,
                              const DistTensor<T, Space>& target,
                              DistTensor<T, Space>& diff_prediction) {
  impl().backward(prediction, target, diff_prediction);
}
template <typename T, typename Space>
void Loss<T, Space>::backward(const DistTensor<T, Space>& prediction,
                              const DistTensor<std::int64_t, Space>& target,
                              DistTensor<T, Space>& diff_prediction) {
  impl().backward(prediction, target, diff_prediction);
}

template <typename T, typename Space>
double Loss<T, Space>::forward_backward(const DistTensor<T, Space>& prediction,
                                        const DistTensor<T, Space>& target,
                                        DistTensor<T, Space>& diff_prediction) {
  return impl().forward_backward(prediction, target, diff_prediction);
}
template <typename T, typename Space>
double Loss<T, Space>::forward_backward(
    const DistTensor<T, Space>& prediction,
    const DistTensor<std::int64_t, Space>& target,
    DistTensor<T, Space>& diff_prediction) {
  return impl().forward_backward(prediction, target, diff_prediction);
}

template <typename T, typename Space>
Index Loss<T, Space>::first_sample() const {
  return impl().shard.lower[0];
}
template <typename T, typename Space>
const std::vector<double>& Loss<T, Space>::sample_losses() const {
  return impl().sample_losses;
}

template <typename T, typename Space>
const LayerStats& Loss<T, Space>::stats() const {
  return impl().stats;
}
template <typename T, typename Space>
void Loss<T, Space>::reset_stats() {
  impl().stats = LayerStats{};
}

template <typename T, typename Space>
std::string Loss<T, Space>::describe() const {
  const Impl& s = impl();
  std::ostringstream out;
  out << to_string(s.desc.kind) << ", " << to_string(s.desc.reduction)
      << " over " << s.shard << "\n";
  return out.str();
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_LOSS_IMPL_H_
