#include "kernels/reference/loss.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include "distconv/element_types.h"
#include "distconv/error.h"

namespace distconv::reference {
namespace {

struct Geometry {
  Index samples, channels, cells;  // cells: spatial volume per sample
  Index at(Index n, Index c, Index s) const {
    return (n * channels + c) * cells + s;
  }
};

Geometry geometry(const LossDesc& desc, const Shape& shape, bool indices) {
  desc.validate(shape);
  require(desc.takes_indices() == indices, ErrorKind::kInvalidArgument,
          to_string(desc.kind), " takes ",
          desc.takes_indices() ? "class indices (int64)" : "a value tensor",
          " as its target");
  Index cells = 1;
  for (int d = 2; d < shape.ndims(); ++d) cells *= shape[d];
  return {shape[0], shape[1], cells};
}

// The cell's maximum m and log sum_c exp(x_c - m): log-sum-exp is their
// sum, but x_c - lse is computed as (x_c - m) - log_sum, which keeps the
// digits a large m would cancel.
struct LogSumExp {
  double max, log_sum;
  double log_softmax(double x) const { return (x - max) - log_sum; }
};

template <typename T>
LogSumExp log_sum_exp(const Geometry& g, const T* x, Index n, Index s) {
  double m = -INFINITY;
  for (Index c = 0; c < g.channels; ++c) {
    m = std::max(m, double(x[g.at(n, c, s)]));
  }
  double sum = 0;
  for (Index c = 0; c < g.channels; ++c) {
    sum += std::exp(double(x[g.at(n, c, s)]) - m);
  }
  return {m, std::log(sum)};
}

// Whether the cell counts, after checking its class index.
bool counts(const LossDesc& desc, const Geometry& g, std::int64_t t) {
  if (desc.ignore_index && t == *desc.ignore_index) return false;
  require(t >= 0 && t < g.channels, ErrorKind::kInvalidArgument, "class index ",
          t, " outside [0, ", g.channels, ")");
  return true;
}

// The loss of one cell and how many terms it counts for.
template <typename T, typename Target>
std::pair<double, double> cell_loss(const LossDesc& desc, const Geometry& g,
                                    const T* x, const Target* t, Index n,
                                    Index s) {
  switch (desc.kind) {
    case LossKind::kCrossEntropyIndices: {
      const std::int64_t k = static_cast<std::int64_t>(t[n * g.cells + s]);
      if (!counts(desc, g, k)) return {0, 0};
      return {-log_sum_exp(g, x, n, s).log_softmax(double(x[g.at(n, k, s)])),
              1};
    }
    case LossKind::kCrossEntropyProbabilities: {
      const LogSumExp lse = log_sum_exp(g, x, n, s);
      double loss = 0;
      for (Index c = 0; c < g.channels; ++c) {
        const Index i = g.at(n, c, s);
        loss -= double(t[i]) * lse.log_softmax(double(x[i]));
      }
      return {loss, 1};
    }
    case LossKind::kMeanSquaredError: {
      double loss = 0;
      for (Index c = 0; c < g.channels; ++c) {
        const Index i = g.at(n, c, s);
        const double d = double(x[i]) - double(t[i]);
        loss += d * d;
      }
      return {loss, double(g.channels)};
    }
  }
  return {0, 0};
}

double reduce(LossReduction r, double sum, double count) {
  if (r == LossReduction::kSum) return sum;
  return count > 0 ? sum / count : 0.0;
}

template <typename T, typename Target>
double forward(const LossDesc& desc, const Shape& shape, const T* x,
               const Target* t, double* per_sample) {
  const Geometry g = geometry(desc, shape, std::is_integral_v<Target>);
  double sum = 0, count = 0;
  for (Index n = 0; n < g.samples; ++n) {
    double sample_sum = 0, sample_count = 0;
    for (Index s = 0; s < g.cells; ++s) {
      const auto [loss, terms] = cell_loss(desc, g, x, t, n, s);
      sample_sum += loss;
      sample_count += terms;
    }
    if (per_sample)
      per_sample[n] = reduce(desc.reduction, sample_sum, sample_count);
    sum += sample_sum;
    count += sample_count;
  }
  return reduce(desc.reduction, sum, count);
}

template <typename T, typename Target>
void backward(const LossDesc& desc, const Shape& shape, const T* x,
              const Target* t, T* dx) {
  const Geometry g = geometry(desc, shape, std::is_integral_v<Target>);
  // The count kMean divides by.
  double count = 0;
  for (Index n = 0; n < g.samples; ++n) {
    for (Index s = 0; s < g.cells; ++s) {
      if (desc.takes_indices()) {
        count += counts(desc, g, static_cast<std::int64_t>(t[n * g.cells + s]));
      } else {
        count += desc.kind == LossKind::kMeanSquaredError ? g.channels : 1;
      }
    }
  }
  const double w = desc.reduction == LossReduction::kSum ? 1.0
                   : count > 0                           ? 1.0 / count
                                                         : 0.0;
  for (Index n = 0; n < g.samples; ++n) {
    for (Index s = 0; s < g.cells; ++s) {
      if (desc.kind == LossKind::kMeanSquaredError) {
        for (Index c = 0; c < g.channels; ++c) {
          const Index i = g.at(n, c, s);
          dx[i] = static_cast<T>(w * 2 * (double(x[i]) - double(t[i])));
        }
        continue;
      }
      // Cross-entropy: softmax_c * (sum_k t_k) - t_c.
      const LogSumExp lse = log_sum_exp(g, x, n, s);
      std::int64_t k = -1;
      double mass = 1;  // sum_k t_k
      if (desc.takes_indices()) {
        k = static_cast<std::int64_t>(t[n * g.cells + s]);
        if (!counts(desc, g, k)) mass = 0;
      } else {
        mass = 0;
        for (Index c = 0; c < g.channels; ++c) mass += double(t[g.at(n, c, s)]);
      }
      for (Index c = 0; c < g.channels; ++c) {
        const Index i = g.at(n, c, s);
        const double p = std::exp(lse.log_softmax(double(x[i])));
        const double tc = desc.takes_indices()
                              ? (mass > 0 && c == k ? 1.0 : 0.0)
                              : double(t[i]);
        dx[i] = static_cast<T>(w * (p * mass - tc));
      }
    }
  }
}

}  // namespace

template <typename T>
double loss_fwd(const LossDesc& desc, const Shape& shape, const T* prediction,
                const T* target, double* per_sample) {
  return forward(desc, shape, prediction, target, per_sample);
}
template <typename T>
double loss_fwd(const LossDesc& desc, const Shape& shape, const T* prediction,
                const std::int64_t* target, double* per_sample) {
  return forward(desc, shape, prediction, target, per_sample);
}
template <typename T>
void loss_bwd(const LossDesc& desc, const Shape& shape, const T* prediction,
              const T* target, T* diff_prediction) {
  backward(desc, shape, prediction, target, diff_prediction);
}
template <typename T>
void loss_bwd(const LossDesc& desc, const Shape& shape, const T* prediction,
              const std::int64_t* target, T* diff_prediction) {
  backward(desc, shape, prediction, target, diff_prediction);
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template double loss_fwd<T>(const LossDesc&, const Shape&, const T*,         \
                              const T*, double*);                              \
  template double loss_fwd<T>(const LossDesc&, const Shape&, const T*,         \
                              const std::int64_t*, double*);                   \
  template void loss_bwd<T>(const LossDesc&, const Shape&, const T*, const T*, \
                            T*);                                               \
  template void loss_bwd<T>(const LossDesc&, const Shape&, const T*,           \
                            const std::int64_t*, T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
