#include "layers/loss.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "layers/internal/channel_cells.h"
#include "layers/internal/given_plan.h"
#include "distconv/internal/mpi_util.h"

namespace distconv {
namespace {

// One cell's logits x (C values at stride sx), the maximum m subtracted:
// fills e[c] = exp(x_c - m) and returns m and sum_c e[c]. Then
// log softmax(x)_c = (x_c - m) - log(sum), which keeps the digits a large m
// would cancel in x_c - (m + log(sum)).
struct Shifted {
  double max, sum;
};

template <typename T>
Shifted exp_shifted(Index channels, const T* x, Index sx, double* e) {
  double m = -INFINITY;
  for (Index c = 0; c < channels; ++c) m = std::max(m, double(x[c * sx]));
  double sum = 0;
  for (Index c = 0; c < channels; ++c) {
    e[c] = std::exp(double(x[c * sx]) - m);
    sum += e[c];
  }
  return {m, sum};
}

void allreduce_sum(std::vector<double>& values, MPI_Comm comm) {
  internal::check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, values.data(),
                    static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, comm),
      "MPI_Allreduce");
}

double reduced(LossReduction r, double sum, double count) {
  if (r == LossReduction::kSum) return sum;
  return count > 0 ? sum / count : 0.0;
}

}  // namespace

template <typename T>
struct Loss<T>::Impl {
  const ProcessGrid* grid;
  LossDesc desc;
  ShardPlan plan;
  const Distribution& prediction;
  const HaloLayout& prediction_layout;
  const HaloLayout& target_layout;
  Box shard;
  std::vector<double> sample_losses;
  std::vector<double> scratch;  // one cell's exp(x_c - m)

  Impl(const ProcessGrid& g, const LossDesc& d, ShardPlan p)
      : grid(&g),
        desc(d),
        plan(std::move(p)),
        prediction(plan.layout("prediction").distribution()),
        prediction_layout(plan.layout("prediction")),
        target_layout(plan.layout("target")),
        shard(plan.shard("prediction")),
        sample_losses(shard.extent[0], 0.0),
        scratch(prediction.global_shape()[1]) {}

  void check_kind(bool indices, const char* pass) const {
    require(desc.takes_indices() == indices, ErrorKind::kInvalidArgument,
            to_string(desc.kind), " loss ", pass, " takes ",
            desc.takes_indices() ? "class indices (DistTensor<int64_t>)"
                                 : "a DistTensor of the prediction's type",
            " as its target");
  }

  template <typename U>
  void check(const DistTensor<U>& t, const HaloLayout& want,
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

  // Whether a class index counts; `bad` counts those out of range.
  bool counts(std::int64_t k, double& bad) const {
    if (desc.ignore_index && k == *desc.ignore_index) return false;
    if (k < 0 || k >= prediction.global_shape()[1]) {
      bad += 1;
      return false;
    }
    return true;
  }

  template <typename Target>
  double forward(const DistTensor<T>& xt, const DistTensor<Target>& tt) {
    internal::run_collectively(grid->comm(), [&] {
      check_kind(std::is_integral_v<Target>, "forward");
      check(xt, prediction_layout, "prediction");
      check(tt, target_layout, "target");
    });
    const StridedView<const T> x = xt.interior();
    const StridedView<const Target> t = tt.interior();
    const Index samples = shard.extent[0], channels = x.extent()[1];
    const Index sx = x.strides()[1], st = t.strides()[1];
    // Per sample: sums, then counts; then the count of bad indices.
    std::vector<double> local(2 * samples + 1, 0.0);
    double& bad = local[2 * samples];
    double* e = scratch.data();
    internal::for_each_cell<2>(
        x.extent(), {x.strides(), t.strides()},
        [&](Index n, const std::array<Index, 2>& at) {
          const T* xc = x.data() + at[0];
          const Target* tc = t.data() + at[1];
          double loss = 0, count = 1;
          switch (desc.kind) {
            case LossKind::kCrossEntropyIndices: {
              const auto k = static_cast<std::int64_t>(tc[0]);
              if (!counts(k, bad)) return;
              const Shifted z = exp_shifted(channels, xc, sx, e);
              loss = std::log(z.sum) - (double(xc[k * sx]) - z.max);
              break;
            }
            case LossKind::kCrossEntropyProbabilities: {
              const Shifted z = exp_shifted(channels, xc, sx, e);
              const double log_sum = std::log(z.sum);
              for (Index c = 0; c < channels; ++c) {
                loss += double(tc[c * st]) *
                        (log_sum - (double(xc[c * sx]) - z.max));
              }
              break;
            }
            case LossKind::kMeanSquaredError: {
              for (Index c = 0; c < channels; ++c) {
                const double d = double(xc[c * sx]) - double(tc[c * st]);
                loss += d * d;
              }
              count = double(channels);
              break;
            }
          }
          local[n] += loss;
          local[samples + n] += count;
        });
    // Each sample's sum and count over the ranks sharing it ...
    allreduce_sum(local, grid->sample_comm());
    // ... then over one rank per sample range.
    std::vector<double> total(3, 0.0);
    for (Index n = 0; n < samples; ++n) {
      total[0] += local[n];
      total[1] += local[samples + n];
    }
    total[2] = local[2 * samples];
    allreduce_sum(total, grid->along(0));
    require_valid_indices(total[2]);
    for (Index n = 0; n < samples; ++n) {
      sample_losses[n] = reduced(desc.reduction, local[n], local[samples + n]);
    }
    return reduced(desc.reduction, total[0], total[1]);
  }

  // The factor kMean divides the gradient by (1 for kSum).
  template <typename Target>
  double gradient_scale(const StridedView<const T>& x,
                        const StridedView<const Target>& t) const {
    const Shape& global = prediction.global_shape();
    double count = double(global.volume() / global[1]);  // cells
    if (desc.kind == LossKind::kMeanSquaredError) count *= double(global[1]);
    if (desc.takes_indices()) {
      // Data-dependent: the counted cells and the bad indices, globally.
      std::vector<double> local(2, 0.0);
      internal::for_each_cell<1>(
          x.extent(), {t.strides()},
          [&](Index, const std::array<Index, 1>& at) {
            local[0] +=
                counts(static_cast<std::int64_t>(t.data()[at[0]]), local[1]);
          });
      allreduce_sum(local, grid->comm());
      require_valid_indices(local[1]);
      count = local[0];
    }
    if (desc.reduction == LossReduction::kSum) return 1.0;
    return count > 0 ? 1.0 / count : 0.0;
  }

  template <typename Target>
  void backward(const DistTensor<T>& xt, const DistTensor<Target>& tt,
                DistTensor<T>& dxt) {
    internal::run_collectively(grid->comm(), [&] {
      check_kind(std::is_integral_v<Target>, "backward");
      check(xt, prediction_layout, "prediction");
      check(tt, target_layout, "target");
      check(dxt, prediction_layout, "diff_prediction");
    });
    const StridedView<const T> x = xt.interior();
    const StridedView<const Target> t = tt.interior();
    const StridedView<T> dx = dxt.interior();
    const double w = gradient_scale(x, t);
    const Index channels = x.extent()[1];
    const Index sx = x.strides()[1], st = t.strides()[1], sdx = dx.strides()[1];
    double* e = scratch.data();
    internal::for_each_cell<3>(
        x.extent(), {x.strides(), t.strides(), dx.strides()},
        [&](Index, const std::array<Index, 3>& at) {
          const T* xc = x.data() + at[0];
          const Target* tc = t.data() + at[1];
          T* dxc = dx.data() + at[2];
          if (desc.kind == LossKind::kMeanSquaredError) {
            for (Index c = 0; c < channels; ++c) {
              dxc[c * sdx] = static_cast<T>(
                  2 * w * (double(xc[c * sx]) - double(tc[c * st])));
            }
            return;
          }
          // Cross-entropy: w (softmax_c * sum_k t_k - t_c).
          double mass = 0;
          std::int64_t k = -1;
          if (desc.takes_indices()) {
            double bad = 0;  // none: gradient_scale checked
            k = static_cast<std::int64_t>(tc[0]);
            if (counts(k, bad)) {
              mass = 1;
            } else {
              k = -1;
            }
          } else {
            for (Index c = 0; c < channels; ++c) mass += double(tc[c * st]);
          }
          const double scale = w * mass / exp_shifted(channels, xc, sx, e).sum;
          for (Index c = 0; c < channels; ++c) {
            const double tcv = desc.takes_indices() ? (c == k ? 1.0 : 0.0)
                                                    : double(tc[c * st]);
            dxc[c * sdx] = static_cast<T>(e[c] * scale - w * tcv);
          }
        });
  }
};

template <typename T>
Loss<T>::Loss(const ProcessGrid& grid, const LossDesc& desc,
              const Distribution& prediction) {
  desc.validate(prediction.global_shape());
  internal::check_grid(prediction, grid.shape(), "prediction");
  impl_ = internal::Pimpl<Impl>::make(
      "loss", grid, desc, plan_loss(desc, prediction, grid.rank()));
}

template <typename T>
Loss<T>::Loss(const ProcessGrid& grid, const LossDesc& desc, ShardPlan plan) {
  internal::check_given_shard_plan(
      grid, plan, internal::element_name<T>(), [&] {
    return plan_loss(desc, plan.layout("prediction").distribution(),
                     plan.rank);
  });
  impl_ = internal::Pimpl<Impl>::make("loss", grid, desc, std::move(plan));
}

template <typename T>
const ShardPlan& Loss<T>::plan() const {
  return impl().plan;
}

template <typename T>
const LossDesc& Loss<T>::desc() const {
  return impl().desc;
}
template <typename T>
const HaloLayout& Loss<T>::prediction_layout() const {
  return impl().prediction_layout;
}
template <typename T>
const HaloLayout& Loss<T>::target_layout() const {
  return impl().target_layout;
}
template <typename T>
const HaloLayout& Loss<T>::diff_prediction_layout() const {
  return impl().prediction_layout;
}

template <typename T>
double Loss<T>::forward(const DistTensor<T>& prediction,
                        const DistTensor<T>& target) {
  return impl().forward(prediction, target);
}
template <typename T>
double Loss<T>::forward(const DistTensor<T>& prediction,
                        const DistTensor<std::int64_t>& target) {
  return impl().forward(prediction, target);
}
template <typename T>
void Loss<T>::backward(const DistTensor<T>& prediction,
                       const DistTensor<T>& target,
                       DistTensor<T>& diff_prediction) {
  impl().backward(prediction, target, diff_prediction);
}
template <typename T>
void Loss<T>::backward(const DistTensor<T>& prediction,
                       const DistTensor<std::int64_t>& target,
                       DistTensor<T>& diff_prediction) {
  impl().backward(prediction, target, diff_prediction);
}

template <typename T>
Index Loss<T>::first_sample() const {
  return impl().shard.lower[0];
}
template <typename T>
const std::vector<double>& Loss<T>::sample_losses() const {
  return impl().sample_losses;
}

template <typename T>
std::string Loss<T>::describe() const {
  const Impl& s = impl();
  std::ostringstream out;
  out << to_string(s.desc.kind) << ", " << to_string(s.desc.reduction)
      << " over " << s.shard << "\n";
  return out.str();
}

template class Loss<float>;
template class Loss<double>;
template class Loss<bf16>;

}  // namespace distconv
