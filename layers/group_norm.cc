#include "layers/group_norm.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "kernels/local_group_norm.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/plan_fingerprints.h"

namespace distconv {

using internal::check_mpi;

// The statistics set's communicator, the running statistics and what the
// last forward normalised with.
template <typename T>
struct GroupNorm<T>::Impl {
  using Kernel = LocalGroupNorm<T>;
  using P = Compute<T>;

  const ProcessGrid* grid;
  GroupNormPlan plan;
  // The ranks sharing this rank's sample and channel coordinates.
  internal::OwnedComm set;
  std::vector<double> running_mean, running_variance;
  bool forward_ran = false;
  BatchNormMode forward_mode = BatchNormMode::kTraining;
  // Per (local sample, local channel): the mean and 1 / sqrt(var + eps)
  // the last forward used.
  std::vector<double> mean, inv_std;
  // Per (local sample, local channel) scratch: sums and factors.
  std::vector<double> s1, s2, a, b, c;
  // Per (local sample, local group), reduced over the set.
  std::vector<double> groups;

  Impl(const ProcessGrid& g, GroupNormPlan p)
      : grid(&g),
        plan(std::move(p)),
        set(g.comm(), set_color(g), g.rank()),
        running_mean(plan.channels, 0.0),
        running_variance(plan.channels, 1.0) {
    const size_t cells = static_cast<size_t>(plan.samples * plan.local_channels);
    for (auto* v : {&mean, &inv_std, &s1, &s2, &a, &b, &c}) v->resize(cells);
  }

  // Ranks of one sample and channel coordinate share a color.
  static int set_color(const ProcessGrid& g) {
    const Shape coord = g.coord();
    return static_cast<int>(coord[0] * g.shape()[1] + coord[1]);
  }

  Index lc() const { return plan.local_channels; }
  Index lg() const { return plan.local_groups; }
  Index group_of(Index c) const { return c / plan.group_size; }

  // Per (n, local group) sums of per (n, local channel) values `v`,
  // allreduced over the set.
  void group_sums(const std::vector<double>& v, std::vector<double>& out,
                  int arrays = 1, const std::vector<double>* w = nullptr) {
    const Index n = plan.samples * lg();
    out.assign(static_cast<size_t>(n * arrays), 0.0);
    for (Index s = 0; s < plan.samples; ++s) {
      for (Index k = 0; k < lc(); ++k) {
        out[s * lg() + group_of(k)] += v[s * lc() + k];
        if (w) out[n + s * lg() + group_of(k)] += (*w)[s * lc() + k];
      }
    }
    if (plan.communicates() && !out.empty()) {
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, out.data(),
                              static_cast<int>(out.size()), MPI_DOUBLE,
                              MPI_SUM, set.get()),
                "MPI_Allreduce");
    }
  }

  // Sums every rank's per-channel contributions (C values each, zero
  // outside its channels) into `out` on every rank.
  void channel_totals(std::vector<double>& out) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, out.data(),
                            static_cast<int>(out.size()), MPI_DOUBLE, MPI_SUM,
                            grid->comm()),
              "MPI_Allreduce");
  }

  void check(const DistTensor<T>& t, const char* what) const {
    internal::check_plan_layout(t.layout(), plan.layout, what,
                                "group normalisation");
  }

  // Batch statistics of src into mean and inv_std (collective over the
  // set), and the running statistics' update (collective over the grid).
  void batch_statistics(const DistTensor<T>& src) {
    const auto x = src.interior();
    Kernel::sums(x, s1.data());
    group_sums(s1, groups);
    const double count = static_cast<double>(plan.count);
    for (Index s = 0; s < plan.samples; ++s) {
      for (Index k = 0; k < lc(); ++k) {
        mean[s * lc() + k] = groups[s * lg() + group_of(k)] / count;
      }
    }
    Kernel::deviations(x, mean.data(), s2.data());
    group_sums(s2, groups);
    std::vector<double> var(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) var[i] = groups[i] / count;
    for (Index s = 0; s < plan.samples; ++s) {
      for (Index k = 0; k < lc(); ++k) {
        inv_std[s * lc() + k] =
            1.0 / std::sqrt(var[s * lg() + group_of(k)] + plan.options.epsilon);
      }
    }
    if (plan.options.running == RunningStats::kTrack) update_running(var);
  }

  // running = (1 - m) running + m * (the samples' mean of each sample's
  // statistics): one rank of each set contributes its samples.
  void update_running(const std::vector<double>& var) {
    std::vector<double> sums(2 * plan.channels, 0.0);
    int set_rank = 0;
    check_mpi(MPI_Comm_rank(set.get(), &set_rank), "MPI_Comm_rank");
    const double n = static_cast<double>(plan.count);
    const double unbias = n > 1 ? n / (n - 1) : 1.0;
    if (set_rank == 0) {
      for (Index s = 0; s < plan.samples; ++s) {
        for (Index k = 0; k < lc(); ++k) {  // one group per channel
          sums[plan.channel_begin + k] += mean[s * lc() + k];
          sums[plan.channels + plan.channel_begin + k] +=
              var[s * lg() + group_of(k)] * unbias;
        }
      }
    }
    channel_totals(sums);
    if (plan.batch == 0) return;
    const double m = plan.options.momentum;
    const double samples = static_cast<double>(plan.batch);
    for (Index k = 0; k < plan.channels; ++k) {
      running_mean[k] = (1 - m) * running_mean[k] + m * sums[k] / samples;
      running_variance[k] = (1 - m) * running_variance[k] +
                            m * sums[plan.channels + k] / samples;
    }
  }

  // mean and inv_std from the running statistics.
  void running_statistics() {
    for (Index s = 0; s < plan.samples; ++s) {
      for (Index k = 0; k < lc(); ++k) {
        const Index ch = plan.channel_begin + k;
        mean[s * lc() + k] = running_mean[ch];
        inv_std[s * lc() + k] =
            1.0 / std::sqrt(running_variance[ch] + plan.options.epsilon);
      }
    }
  }

  double scale_of(const P* scale, Index k) const {
    return scale ? double(scale[plan.channel_begin + k]) : 1.0;
  }
};

template <typename T>
GroupNorm<T>::GroupNorm(const ProcessGrid& grid, const Distribution& src,
                        const GroupNormOptions& options) {
  GroupNormPlan plan = internal::plan_collectively(grid, [&] {
    internal::check_grid(src, grid.shape(), "input");
    return plan_group_norm(src, grid.rank(), options);
  });
  internal::check_given_plan(
      grid, plan.layout.distribution(), plan.rank,
      internal::layer_fingerprint<T, HostSpace>(plan));
  impl_ = internal::Pimpl<Impl>::make("group normalisation", grid,
                                      std::move(plan));
}

template <typename T>
const GroupNormPlan& GroupNorm<T>::plan() const {
  return impl().plan;
}
template <typename T>
Index GroupNorm<T>::channels() const {
  return impl().plan.channels;
}
template <typename T>
const HaloLayout& GroupNorm<T>::src_layout() const {
  return impl().plan.layout;
}

template <typename T>
void GroupNorm<T>::set_mode(BatchNormMode mode) {
  Impl& s = impl();
  require(mode == BatchNormMode::kTraining ||
              s.plan.options.running == RunningStats::kTrack,
          ErrorKind::kInvalidArgument, "group normalisation in inference "
          "uses running statistics: plan it with RunningStats::kTrack");
  s.plan.options.mode = mode;
}

template <typename T>
void GroupNorm<T>::forward(const DistTensor<T>& src, const Param* scale,
                           const Param* shift, DistTensor<T>& dst) {
  Impl& s = impl();
  const bool training = s.plan.options.mode == BatchNormMode::kTraining;
  internal::run_collectively(training ? s.grid->comm() : MPI_COMM_NULL, [&] {
    s.check(src, "src");
    s.check(dst, "dst");
  });
  if (training) {
    s.batch_statistics(src);
  } else {
    s.running_statistics();
  }
  for (Index n = 0; n < s.plan.samples; ++n) {
    for (Index k = 0; k < s.lc(); ++k) {
      const Index i = n * s.lc() + k;
      s.a[i] = s.inv_std[i] * s.scale_of(scale, k);
      s.b[i] = shift ? double(shift[s.plan.channel_begin + k]) : 0.0;
    }
  }
  Impl::Kernel::affine(src.interior(), s.mean.data(), s.a.data(), s.b.data(),
                       dst.interior());
  s.forward_ran = true;
  s.forward_mode = s.plan.options.mode;
}

template <typename T>
void GroupNorm<T>::backward(const DistTensor<T>& src,
                            const DistTensor<T>& diff_dst, const Param* scale,
                            DistTensor<T>& diff_src, Param* diff_scale,
                            Param* diff_shift) {
  Impl& s = impl();
  internal::run_collectively(s.grid->comm(), [&] {
    require(s.forward_ran, ErrorKind::kState,
            "group normalisation backward before any forward");
    s.check(src, "src");
    s.check(diff_dst, "diff_dst");
    s.check(diff_src, "diff_src");
  });
  const Index cells = s.plan.samples * s.lc();
  // s1 = sum dy, s2 = sum dy * (x - mean), per (n, c).
  Impl::Kernel::gradient_sums(src.interior(), diff_dst.interior(),
                              s.mean.data(), s.s1.data(), s.s2.data());
  std::vector<double> params(2 * s.plan.channels, 0.0);
  for (Index n = 0; n < s.plan.samples; ++n) {
    for (Index k = 0; k < s.lc(); ++k) {
      const Index i = n * s.lc() + k, ch = s.plan.channel_begin + k;
      params[ch] += s.inv_std[i] * s.s2[i];
      params[s.plan.channels + ch] += s.s1[i];
    }
  }
  const double count = static_cast<double>(s.plan.count);
  if (s.forward_mode == BatchNormMode::kTraining) {
    // Per group: S1 = sum scale * dy, S2 = sum scale * dy * (x - mean).
    std::vector<double> g1(cells), g2(cells);
    for (Index n = 0; n < s.plan.samples; ++n) {
      for (Index k = 0; k < s.lc(); ++k) {
        const Index i = n * s.lc() + k;
        g1[i] = s.scale_of(scale, k) * s.s1[i];
        g2[i] = s.scale_of(scale, k) * s.s2[i];
      }
    }
    s.group_sums(g1, s.groups, 2, &g2);
    const Index half = s.plan.samples * s.lg();
    for (Index n = 0; n < s.plan.samples; ++n) {
      for (Index k = 0; k < s.lc(); ++k) {
        const Index i = n * s.lc() + k, g = n * s.lg() + s.group_of(k);
        const double r = s.inv_std[i];
        s.a[i] = r * s.scale_of(scale, k);
        s.b[i] = -r * r * r * s.groups[half + g] / count;
        s.c[i] = -r * s.groups[g] / count;
      }
    }
  } else {
    for (Index i = 0; i < cells; ++i) {
      s.a[i] = s.inv_std[i] * s.scale_of(scale, i % std::max<Index>(s.lc(), 1));
      s.b[i] = 0;
      s.c[i] = 0;
    }
  }
  Impl::Kernel::diff_src(src.interior(), diff_dst.interior(), s.mean.data(),
                         s.a.data(), s.b.data(), s.c.data(),
                         diff_src.interior());
  s.channel_totals(params);
  for (Index ch = 0; ch < s.plan.channels; ++ch) {
    if (diff_scale) diff_scale[ch] = static_cast<Param>(params[ch]);
    if (diff_shift) {
      diff_shift[ch] = static_cast<Param>(params[s.plan.channels + ch]);
    }
  }
}

template <typename T>
const std::vector<double>& GroupNorm<T>::running_mean() const {
  return impl().running_mean;
}
template <typename T>
const std::vector<double>& GroupNorm<T>::running_variance() const {
  return impl().running_variance;
}
template <typename T>
void GroupNorm<T>::set_running_stats(const double* mean,
                                     const double* variance) {
  Impl& s = impl();
  require(mean != nullptr && variance != nullptr, ErrorKind::kInvalidArgument,
          "group normalisation running statistics are null");
  std::copy(mean, mean + s.plan.channels, s.running_mean.begin());
  std::copy(variance, variance + s.plan.channels, s.running_variance.begin());
}

template <typename T>
std::string GroupNorm<T>::describe() const {
  return impl().plan.describe();
}

#define DISTCONV_INSTANTIATE(T) template class GroupNorm<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
