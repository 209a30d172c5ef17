// Internal: the batch normalisation layer, BatchNorm<T, Space> (see
// layers/batch_norm.h), written once for every memory space. The plan's
// per-channel passes run the space's kernel for a BatchNormKernelCall
// (layers/internal/space_kernel.h), with the interface below:
// LocalBatchNorm in host memory (kernels/local_batch_norm.h; a fused ReLU
// runs in its passes), CudaBatchNorm on the GPU (kernels/cuda/batch_norm.h).
// The caller's parameter arrays are read and written from the host
// (layers/internal/host_staging.h).
//
// The statistics, their reductions across the set and the running
// statistics are this file's, in double on the host, the same for every
// space. Included by the .cc that specialises SpaceKernel for a space and
// instantiates the layer for it: layers/batch_norm.cc (host),
// layers/device_batch_norm.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_BATCH_NORM_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_BATCH_NORM_IMPL_H_

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "kernels/norm_activation.h"
#include "layers/batch_norm.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/host_staging.h"
#include "layers/internal/plan_fingerprints.h"
#include "layers/internal/space_kernel.h"

namespace distconv {
namespace internal {

// A rank's per-channel passes: over channels-last arrays of `channels`
// channels (the rank's block).
struct BatchNormKernelCall {
  Index channels;
};

// Per-channel arrays of doubles on the host; the arrays x, dy, y, dx in
// the space's memory.
template <>
struct KernelInterface<BatchNormKernelCall> {
  template <typename K, typename T, typename Space>
  using passes = decltype(
      // sums[c] and squared deviations m2[c] of x's channels
      std::declval<K&>().moments(std::declval<const T*>(), Index(),
                                 std::declval<double*>(),
                                 std::declval<double*>()),
      // y = (x - mean) a + b
      std::declval<K&>().affine(
          std::declval<const T*>(), Index(), std::declval<const double*>(),
          std::declval<const double*>(), std::declval<const double*>(),
          std::declval<T*>()),
      // sum dy, sum dy (x - mean)
      std::declval<K&>().gradient_sums(
          std::declval<const T*>(), std::declval<const T*>(), Index(),
          std::declval<const double*>(), std::declval<double*>(),
          std::declval<double*>()),
      // dx = a ((dy - dy_mean) - (x - mean) k)
      std::declval<K&>().diff_src(
          std::declval<const T*>(), std::declval<const T*>(), Index(),
          std::declval<const double*>(), std::declval<const double*>(),
          std::declval<const double*>(), std::declval<const double*>(),
          std::declval<T*>()),
      // what runs them
      std::string(K::implementation()));
};

}  // namespace internal

// The resources a plan runs on: the statistics set's communicator and the
// space's kernel; the running statistics and the state between passes.
template <typename T, typename Space>
struct BatchNorm<T, Space>::Impl {
  BatchNormPlan plan;  // options.mode: the current mode (set_mode)
  // The set's communicator; MPI_COMM_NULL when the set is this rank alone.
  MPI_Comm comm = MPI_COMM_NULL;
  using Kernel =
      internal::SpaceKernelOf<internal::BatchNormKernelCall, T, Space>;
  using P = Compute<T>;  // scale, shift and their gradients
  // Host memory: a fused ReLU runs in the kernels' passes.
  static constexpr bool kHost = std::is_same_v<Space, HostSpace>;
  // What a failed copy of the parameter arrays names.
  static constexpr const char* kParameters = "batch normalisation parameters";
  static constexpr const char* kGradients = "batch normalisation gradients";
  Exec<Space> exec;
  Kernel kernel;

  std::vector<double> running_mean, running_variance;
  std::vector<double> batch_mean, batch_variance;
  // What the last forward normalised with, and how.
  bool forward_ran = false;
  BatchNormMode forward_mode = BatchNormMode::kTraining;
  std::vector<double> used_mean, used_inv_std;
  // Per-channel sums, reduced together: [sum dy | sum dy * (x - mean)] in
  // backward, sums of values or of squared deviations in forward.
  std::vector<double> sums;
  // This rank's moments (the kernel's moments()).
  std::vector<double> local_sums, m2;
  // Per-channel factors of the elementwise passes (the kernel's a, b
  // in forward; a, dy_mean, k in backward).
  std::vector<double> coef_a, coef_b, coef_c;
  // With a fused ReLU: the last forward's a and b, which backward's gate
  // recomputes the normalised values with.
  std::vector<double> relu_a, relu_b;
  // Host copies of the caller's parameter arrays (host_values) and the
  // parameter gradients before store_host_values.
  std::vector<P> scale_copy, shift_copy, diff_scale_out, diff_shift_out;
  LayerStats stats;  // allreduce_wait_s: in allreduce_sums

  Impl(const ProcessGrid& grid, BatchNormPlan p, const Exec<Space>& e)
      : plan(std::move(p)),
        exec(e),
        kernel(internal::make_kernel<T>(
            exec, internal::BatchNormKernelCall{plan.local_channels})) {
    if (plan.communicates()) {
      comm = plan.options.stats == BatchNormStats::kSampleBlock
                 ? grid.sample_comm()
                 : grid.comm();
    }
    const size_t n = static_cast<size_t>(plan.channels);
    running_mean.assign(n, 0.0);
    running_variance.assign(n, 1.0);
    batch_mean.assign(n, 0.0);
    batch_variance.assign(n, 0.0);
    used_mean.assign(n, 0.0);
    used_inv_std.assign(n, 1.0);
    sums.assign(2 * n, 0.0);
    for (auto* v : {&coef_a, &coef_b, &coef_c, &relu_a, &relu_b}) {
      v->assign(n, 0.0);
    }
    local_sums.assign(static_cast<size_t>(plan.local_channels), 0.0);
    m2.assign(local_sums.size(), 0.0);
    diff_scale_out.assign(n, P(0));
    diff_shift_out.assign(n, P(0));
  }

  void check_layout(const DistTensor<T, Space>& t, const char* what) const {
    internal::check_plan_layout(t.layout(), plan.layout, what,
                                "batch normalisation");
  }

  void check_array(const void* p, const char* what) const {
    require(p != nullptr || plan.channels == 0, ErrorKind::kInvalidArgument,
            what, " is null; it needs ", plan.channels,
            " values (one per channel)");
  }

  // Sums the first `n` entries of `sums` over the set, in place.
  void allreduce_sums(Index n) {
    if (comm == MPI_COMM_NULL || n == 0) return;
    const double start = MPI_Wtime();
    internal::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(n),
                      MPI_DOUBLE, MPI_SUM, comm),
        "MPI_Allreduce");
    stats.allreduce_wait_s += MPI_Wtime() - start;
  }

  // The set's mean and biased variance. Each rank reads its shard once
  // (the kernel's moments(): its sums S_r and squared deviations M2_r
  // from its own mean, over r values per channel); the sums are allreduced
  // to the set's mean mu, then Chan's merge of the ranks,
  //   M2 = sum over ranks of M2_r + r * (S_r / r - mu)^2,
  // is a second allreduce. The variance is M2 / count.
  //
  // On a grid splitting channels, the rank's own channels sit at
  // channel_begin of the set's arrays and the others hold zeros, so each
  // channel is summed over the ranks holding it.
  void batch_statistics(const T* x) {
    const Index c0 = plan.channel_begin, lc = plan.local_channels;
    kernel.moments(x, plan.elements, local_sums.data(), m2.data());
    std::fill(sums.begin(), sums.end(), 0.0);
    std::copy(local_sums.begin(), local_sums.end(), sums.begin() + c0);
    allreduce_sums(plan.channels);
    const double n = double(plan.count);
    for (Index ch = plan.stats_begin; ch < plan.stats_end; ++ch)
      batch_mean[ch] = sums[ch] / n;
    std::fill(sums.begin(), sums.begin() + plan.channels, 0.0);
    const Index rows = lc > 0 ? plan.elements / lc : 0;
    for (Index i = 0; i < lc; ++i) {
      const double delta =
          rows > 0 ? local_sums[i] / double(rows) - batch_mean[c0 + i] : 0.0;
      sums[c0 + i] = m2[i] + double(rows) * delta * delta;
    }
    allreduce_sums(plan.channels);
    for (Index ch = plan.stats_begin; ch < plan.stats_end; ++ch)
      batch_variance[ch] = sums[ch] / n;
  }

  void update_running() {
    const double m = plan.options.momentum;
    for (Index ch = plan.stats_begin; ch < plan.stats_end; ++ch) {
      running_mean[ch] = (1 - m) * running_mean[ch] + m * batch_mean[ch];
      if (plan.count > 1) {
        const double unbiased =
            batch_variance[ch] * double(plan.count) / double(plan.count - 1);
        running_variance[ch] = (1 - m) * running_variance[ch] + m * unbiased;
      }
    }
  }

  void forward(const T* x, const P* scale, const P* shift, T* y) {
    const bool training = plan.options.mode == BatchNormMode::kTraining;
    forward_mode = plan.options.mode;
    forward_ran = true;
    if (plan.channels == 0) return;
    if (plan.count == 0) {  // the whole set is empty: nothing to normalise
      if (training) {
        std::fill(batch_mean.begin(), batch_mean.end(), 0.0);
        std::fill(batch_variance.begin(), batch_variance.end(), 0.0);
      }
      return;
    }
    if (training) {
      batch_statistics(x);
      update_running();
      used_mean = batch_mean;
      for (Index ch = plan.stats_begin; ch < plan.stats_end; ++ch) {
        used_inv_std[ch] =
            1.0 / std::sqrt(batch_variance[ch] + plan.options.epsilon);
      }
    } else {
      used_mean = running_mean;
      for (Index ch = plan.stats_begin; ch < plan.stats_end; ++ch) {
        used_inv_std[ch] =
            1.0 / std::sqrt(running_variance[ch] + plan.options.epsilon);
      }
    }
    if (plan.elements == 0) return;
    const P* scale_h = internal::host_values(exec, scale, plan.channels,
                                             scale_copy, kParameters);
    const P* shift_h = internal::host_values(exec, shift, plan.channels,
                                             shift_copy, kParameters);
    for (Index ch = plan.stats_begin; ch < plan.stats_end; ++ch) {
      coef_a[ch] = double(scale_h[ch]) * used_inv_std[ch];
      coef_b[ch] = double(shift_h[ch]);
    }
    const Index c0 = plan.channel_begin;
    const NormActivation act = plan.options.activation;
    if (act == NormActivation::kRelu) {
      relu_a = coef_a;
      relu_b = coef_b;
    }
    if constexpr (kHost) {
      kernel.affine(x, plan.elements, used_mean.data() + c0, coef_a.data() + c0,
                    coef_b.data() + c0, y, act);
    } else {
      kernel.affine(x, plan.elements, used_mean.data() + c0, coef_a.data() + c0,
                    coef_b.data() + c0, y);
    }
  }

  // The gate of a fused ReLU (none without one).
  ReluGate relu_gate() const {
    if (plan.options.activation != NormActivation::kRelu) return {};
    const Index c0 = plan.channel_begin;
    return {relu_a.data() + c0, relu_b.data() + c0};
  }

  // sums = [sum dy | sum dy * (x - mean)] over the set; diff_scale is
  // the second times inv_std (sum dy * x^), diff_shift the first. Training
  // also differentiates through the batch statistics:
  //   dx = a * (dy - sum_dy / n - x^ * sum_dy_xhat / n),  a = scale * inv_std
  //      = a * ((dy - dy_mean) - (x - mean) * k),
  // dy_mean = sum_dy / n, k = inv_std * sum_dy_xhat / n; inference has
  // dy_mean = k = 0.
  void backward(const T* x, const T* dy, const P* scale, T* dx, P* diff_scale,
                P* diff_shift) {
    const bool training = forward_mode == BatchNormMode::kTraining;
    if (plan.channels == 0) return;
    std::fill(sums.begin(), sums.end(), 0.0);
    const Index c0 = plan.channel_begin;
    if (plan.count > 0) {
      double* sum_dy = sums.data() + c0;
      double* sum_dy_dev = sums.data() + plan.channels + c0;
      if constexpr (kHost) {
        kernel.gradient_sums(x, dy, plan.elements, used_mean.data() + c0,
                             sum_dy, sum_dy_dev, relu_gate());
      } else {
        kernel.gradient_sums(x, dy, plan.elements, used_mean.data() + c0,
                             sum_dy, sum_dy_dev);
      }
      allreduce_sums(2 * plan.channels);
    }
    const double n = double(plan.count);
    const P* scale_h = internal::host_values(exec, scale, plan.channels,
                                             scale_copy, kParameters);
    // Channels outside the set's statistics (kShard, channels split) keep
    // their zeros.
    for (Index ch = plan.stats_begin; ch < plan.stats_end; ++ch) {
      const double sum_dy = sums[ch];
      const double sum_dy_xhat = sums[plan.channels + ch] * used_inv_std[ch];
      diff_shift_out[ch] = static_cast<P>(sum_dy);
      diff_scale_out[ch] = static_cast<P>(sum_dy_xhat);
      coef_a[ch] = double(scale_h[ch]) * used_inv_std[ch];
      coef_b[ch] = coef_c[ch] = 0;
      if (training && plan.count > 0) {
        coef_b[ch] = sum_dy / n;
        coef_c[ch] = used_inv_std[ch] * sum_dy_xhat / n;
      }
    }
    internal::store_host_values(exec, diff_shift_out, diff_shift, kGradients);
    internal::store_host_values(exec, diff_scale_out, diff_scale, kGradients);
    if (plan.elements == 0) return;
    const double* f[4] = {used_mean.data() + c0, coef_a.data() + c0,
                          coef_b.data() + c0, coef_c.data() + c0};
    if constexpr (kHost) {
      kernel.diff_src(x, dy, plan.elements, f[0], f[1], f[2], f[3], dx,
                      relu_gate());
    } else {
      kernel.diff_src(x, dy, plan.elements, f[0], f[1], f[2], f[3], dx);
    }
  }
};

template <typename T, typename Space>
BatchNorm<T, Space>::BatchNorm(const ProcessGrid& grid, const Distribution& src,
                               const BatchNormOptions& options,
                               const Exec<Space>& exec)
    : BatchNorm(grid,
                internal::plan_collectively(
                    grid,
                    [&] {
                      internal::check_grid(src, grid.shape(), "input");
                      return plan_batch_norm(src, grid.rank(), options);
                    }),
                exec) {}

template <typename T, typename Space>
BatchNorm<T, Space>::BatchNorm(const ProcessGrid& grid, BatchNormPlan plan,
                               const Exec<Space>& exec) {
  internal::check_given_plan(
      grid, plan.layout.distribution(), plan.rank,
      internal::layer_fingerprint<T, Space>(plan));
  // The same on every rank: the plans agree.
  require(Impl::kHost || plan.options.activation == NormActivation::kNone,
          ErrorKind::kUnsupported,
          "batch normalisation with a fused ReLU runs in host memory; in GPU "
          "memory follow it with an Activation layer");
  // Its per-channel arrays, agreed: an allocation failing on one rank
  // fails on every rank.
  internal::run_collectively(grid.comm(), [&] {
    impl_ = internal::Pimpl<Impl>::make("batch normalisation", grid,
                                        std::move(plan), exec);
  });
}

template <typename T, typename Space>
const BatchNormPlan& BatchNorm<T, Space>::plan() const {
  return impl().plan;
}

template <typename T, typename Space>
const BatchNormOptions& BatchNorm<T, Space>::options() const {
  return impl().plan.options;
}
template <typename T, typename Space>
Index BatchNorm<T, Space>::channels() const {
  return impl().plan.channels;
}
template <typename T, typename Space>
Index BatchNorm<T, Space>::count() const {
  return impl().plan.count;
}
template <typename T, typename Space>
const HaloLayout& BatchNorm<T, Space>::src_layout() const {
  return impl().plan.layout;
}
template <typename T, typename Space>
const HaloLayout& BatchNorm<T, Space>::dst_layout() const {
  return impl().plan.layout;
}
template <typename T, typename Space>
const HaloLayout& BatchNorm<T, Space>::diff_dst_layout() const {
  return impl().plan.layout;
}
template <typename T, typename Space>
const HaloLayout& BatchNorm<T, Space>::diff_src_layout() const {
  return impl().plan.layout;
}

template <typename T, typename Space>
void BatchNorm<T, Space>::set_mode(BatchNormMode mode) {
  require(mode == BatchNormMode::kTraining || mode == BatchNormMode::kInference,
          ErrorKind::kInvalidArgument, "unknown BatchNormMode value ",
          static_cast<int>(mode));
  impl().plan.options.mode = mode;
}

template <typename T, typename Space>
void BatchNorm<T, Space>::forward(const DistTensor<T, Space>& src,
                                  const Param* scale, const Param* shift,
                                  DistTensor<T, Space>& dst) {
  Impl& s = impl();
  // The argument checks on every rank of the set together when the pass
  // communicates (so that none waits for a rank that threw), else here.
  const bool training = s.plan.options.mode == BatchNormMode::kTraining;
  internal::run_collectively(training ? s.comm : MPI_COMM_NULL, [&] {
    s.check_layout(src, "src");
    s.check_layout(dst, "dst");
    s.check_array(scale, "scale");
    s.check_array(shift, "shift");
  });
  s.forward(src.data(), scale, shift, dst.data());
}

template <typename T, typename Space>
void BatchNorm<T, Space>::backward(const DistTensor<T, Space>& src,
                                   const DistTensor<T, Space>& diff_dst,
                                   const Param* scale,
                                   DistTensor<T, Space>& diff_src,
                                   Param* diff_scale, Param* diff_shift) {
  Impl& s = impl();
  internal::run_collectively(s.comm, [&] {
    s.check_layout(src, "src");
    s.check_layout(diff_dst, "diff_dst");
    s.check_layout(diff_src, "diff_src");
    s.check_array(scale, "scale");
    s.check_array(diff_scale, "diff_scale");
    s.check_array(diff_shift, "diff_shift");
    require(s.forward_ran, ErrorKind::kState,
            "batch normalisation's backward needs a forward first (it uses "
            "that forward's statistics)");
  });
  s.backward(src.data(), diff_dst.data(), scale, diff_src.data(), diff_scale,
             diff_shift);
}

template <typename T, typename Space>
const std::vector<double>& BatchNorm<T, Space>::running_mean() const {
  return impl().running_mean;
}
template <typename T, typename Space>
const std::vector<double>& BatchNorm<T, Space>::running_variance() const {
  return impl().running_variance;
}
template <typename T, typename Space>
void BatchNorm<T, Space>::set_running_stats(const double* mean,
                                     const double* variance) {
  Impl& s = impl();
  s.check_array(mean, "running mean");
  s.check_array(variance, "running variance");
  std::copy(mean, mean + s.plan.channels, s.running_mean.begin());
  std::copy(variance, variance + s.plan.channels, s.running_variance.begin());
}
template <typename T, typename Space>
const std::vector<double>& BatchNorm<T, Space>::batch_mean() const {
  return impl().batch_mean;
}
template <typename T, typename Space>
const std::vector<double>& BatchNorm<T, Space>::batch_variance() const {
  return impl().batch_variance;
}

template <typename T, typename Space>
const LayerStats& BatchNorm<T, Space>::stats() const {
  return impl().stats;
}
template <typename T, typename Space>
void BatchNorm<T, Space>::reset_stats() {
  impl().stats = LayerStats{};
}

template <typename T, typename Space>
std::string BatchNorm<T, Space>::describe() const {
  const BatchNormPlan& p = impl().plan;
  std::ostringstream out;
  out << p.describe() << ": channels-last loops ("
      << Impl::Kernel::implementation() << "), " << p.channels << " channels, "
      << p.elements << " values here\n";
  return out.str();
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_BATCH_NORM_IMPL_H_
