// The per-cell math of softmax, log-softmax and the losses (a cell is one
// (n, spatial) position of an (N, C, spatial...) tensor and its C channel
// values), and CellWalk, the cells of strided views numbered for one GPU
// thread each. Pure C++ with no CUDA header: the host loops
// (kernels/local_softmax.cc, kernels/local_loss.cc) and the CUDA kernels
// (kernels/cuda/softmax_kernels.cu, loss_kernels.cu) call the very same
// functions, so this code is built and tested in every build.
//
// Every function reads a cell's C values at a channel stride (1 in
// channels-last storage), computes in double (the cell's maximum
// subtracted first: no overflow) and rounds once to T. Each output value
// is written after the last read of its own input, so outputs may be
// their inputs (in place).
//
//   const CellShift z = cell_shift(channels, x, 1);   // max, sum exp(x - max)
//   softmax_cell_forward(SoftmaxKind::kSoftmax, channels, x, 1, y, 1);
#ifndef DISTCONV_KERNELS_CHANNEL_CELLS_H_
#define DISTCONV_KERNELS_CHANNEL_CELLS_H_

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "distconv/internal/host_device.h"
#include "distconv/loss_desc.h"
#include "distconv/shape.h"

namespace distconv {

// The cells of K views of one extent (N, C, 1 to 3 spatial; C is not
// walked): cell e is sample e / per_sample(), then the spatial position in
// row-major order, the last dimension fastest.
template <std::size_t K>
struct CellWalk {
  std::int64_t samples = 0, channels = 0;
  std::int64_t s[3] = {1, 1, 1};   // spatial, padded in front
  std::int64_t stride[K][5] = {};  // per view: N, C, D, H, W
  DISTCONV_HOST_DEVICE std::int64_t per_sample() const {
    return s[0] * s[1] * s[2];
  }
  // 0 when any extent, C included, is 0.
  DISTCONV_HOST_DEVICE std::int64_t cells() const {
    return channels == 0 ? 0 : samples * per_sample();
  }
  // Each view's offset of channel 0 of cell `i` of sample n.
  DISTCONV_HOST_DEVICE void offsets(std::int64_t n, std::int64_t i,
                                    std::int64_t* at) const {
    const std::int64_t i2 = i % s[2];
    i /= s[2];
    const std::int64_t i1 = i % s[1], i0 = i / s[1];
    for (std::size_t k = 0; k < K; ++k) {
      at[k] = n * stride[k][0] + i0 * stride[k][2] + i1 * stride[k][3] +
              i2 * stride[k][4];
    }
  }
};

// Of views with these strides over `extent` (N, C, 1 to 3 spatial).
template <std::size_t K>
CellWalk<K> cell_walk(const Shape& extent,
                      const std::array<Shape, K>& strides) {
  CellWalk<K> w;
  w.samples = extent[0];
  w.channels = extent[1];
  const int k = extent.ndims() - 2;
  for (int d = 0; d < 3; ++d) {
    const int from = d - (3 - k);
    if (from >= 0) w.s[d] = extent[from + 2];
  }
  for (std::size_t v = 0; v < K; ++v) {
    w.stride[v][0] = strides[v][0];
    w.stride[v][1] = strides[v][1];
    for (int d = 0; d < 3; ++d) {
      const int from = d - (3 - k);
      if (from >= 0) w.stride[v][d + 2] = strides[v][from + 2];
    }
  }
  return w;
}

// A cell's maximum and sum_c exp(x_c - max). Then log softmax(x)_c =
// (x_c - max) - log(sum), which keeps the digits a large maximum would
// cancel in x_c - (max + log(sum)).
struct CellShift {
  double max, sum;
};

template <typename T>
DISTCONV_HOST_DEVICE double cell_max(std::int64_t channels, const T* x,
                                     std::int64_t sx) {
  double m = -INFINITY;
  for (std::int64_t c = 0; c < channels; ++c) {
    const double v = static_cast<double>(x[c * sx]);
    m = m < v ? v : m;
  }
  return m;
}

// With `kept` non-null, kept[c] = exp(x_c - max) as well.
template <typename T>
DISTCONV_HOST_DEVICE CellShift cell_shift(std::int64_t channels, const T* x,
                                          std::int64_t sx,
                                          double* kept = nullptr) {
  const double m = cell_max(channels, x, sx);
  double sum = 0;
  for (std::int64_t c = 0; c < channels; ++c) {
    const double e = exp(static_cast<double>(x[c * sx]) - m);
    if (kept != nullptr) kept[c] = e;
    sum += e;
  }
  return {m, sum};
}

// The most channels whose exponentials a cell's gradient keeps from its
// sum to its outputs (more: computed twice, the same values).
inline constexpr std::int64_t kKeptExps = 64;

// y = softmax(x) or log-softmax(x) over the cell's channels.
template <typename T>
DISTCONV_HOST_DEVICE void softmax_cell_forward(SoftmaxKind kind,
                                               std::int64_t channels,
                                               const T* x, std::int64_t sx,
                                               T* y, std::int64_t sy) {
  const CellShift z = cell_shift(channels, x, sx);
  if (kind == SoftmaxKind::kSoftmax) {
    const double inv = 1.0 / z.sum;
    for (std::int64_t c = 0; c < channels; ++c) {
      y[c * sy] =
          static_cast<T>(exp(static_cast<double>(x[c * sx]) - z.max) * inv);
    }
  } else {
    const double log_sum = log(z.sum);
    for (std::int64_t c = 0; c < channels; ++c) {
      y[c * sy] =
          static_cast<T>((static_cast<double>(x[c * sx]) - z.max) - log_sum);
    }
  }
}

// dx = J^T dy from the forward's output y:
//   softmax:     dx_c = y_c (dy_c - sum_k dy_k y_k)
//   log-softmax: dx_c = dy_c - exp(y_c) sum_k dy_k
template <typename T>
DISTCONV_HOST_DEVICE void softmax_cell_backward(SoftmaxKind kind,
                                                std::int64_t channels,
                                                const T* y, std::int64_t sy,
                                                const T* dy, std::int64_t sdy,
                                                T* dx, std::int64_t sdx) {
  double sum = 0;
  if (kind == SoftmaxKind::kSoftmax) {
    for (std::int64_t c = 0; c < channels; ++c) {
      sum += static_cast<double>(dy[c * sdy]) * static_cast<double>(y[c * sy]);
    }
    for (std::int64_t c = 0; c < channels; ++c) {
      const double yc = static_cast<double>(y[c * sy]);
      const double dyc = static_cast<double>(dy[c * sdy]);
      dx[c * sdx] = static_cast<T>(yc * (dyc - sum));
    }
  } else {
    for (std::int64_t c = 0; c < channels; ++c) {
      sum += static_cast<double>(dy[c * sdy]);
    }
    for (std::int64_t c = 0; c < channels; ++c) {
      const double yc = static_cast<double>(y[c * sy]);
      const double dyc = static_cast<double>(dy[c * sdy]);
      dx[c * sdx] = static_cast<T>(dyc - exp(yc) * sum);
    }
  }
}

// A LossDesc as plain values for the cells (no std::optional), with the
// prediction's channel count.
struct LossCellDesc {
  LossKind kind = LossKind::kCrossEntropyIndices;
  bool has_ignore = false;
  std::int64_t ignore_index = 0;
  std::int64_t classes = 0;  // C

  // Whether class index k counts; counts those out of [0, C) in `bad`.
  DISTCONV_HOST_DEVICE bool counts(std::int64_t k, double& bad) const {
    if (has_ignore && k == ignore_index) return false;
    if (k < 0 || k >= classes) {
      bad += 1;
      return false;
    }
    return true;
  }
};

inline LossCellDesc loss_cell_desc(const LossDesc& desc, std::int64_t classes) {
  LossCellDesc d;
  d.kind = desc.kind;
  d.has_ignore = desc.ignore_index.has_value();
  d.ignore_index = desc.ignore_index.value_or(0);
  d.classes = classes;
  return d;
}

// A cell's share of a loss: its term, how many terms it counts (0 or 1
// cells for cross-entropy, C elements for mean squared error) and how many
// bad class indices it holds.
struct LossCellTerm {
  double loss = 0, count = 0, bad = 0;
};

// Mean squared error's term of a cell: its C squared differences.
template <typename T, typename Target>
DISTCONV_HOST_DEVICE LossCellTerm mse_cell_term(const LossCellDesc& d,
                                                const T* x, std::int64_t sx,
                                                const Target* t,
                                                std::int64_t st) {
  LossCellTerm out;
  for (std::int64_t c = 0; c < d.classes; ++c) {
    const double v =
        static_cast<double>(x[c * sx]) - static_cast<double>(t[c * st]);
    out.loss += v * v;
  }
  out.count = static_cast<double>(d.classes);
  return out;
}

// Cross-entropy's term of a counted cell whose shift is z (its class
// index, for kCrossEntropyIndices, known to count).
template <typename T, typename Target>
DISTCONV_HOST_DEVICE LossCellTerm
cross_entropy_cell_term(const LossCellDesc& d, const CellShift& z, const T* x,
                        std::int64_t sx, const Target* t, std::int64_t st) {
  LossCellTerm out;
  out.count = 1;
  if (d.kind == LossKind::kCrossEntropyIndices) {
    const auto k = static_cast<std::int64_t>(t[0]);
    out.loss = log(z.sum) - (static_cast<double>(x[k * sx]) - z.max);
    return out;
  }
  const double log_sum = log(z.sum);
  for (std::int64_t c = 0; c < d.classes; ++c) {
    out.loss += static_cast<double>(t[c * st]) *
                (log_sum - (static_cast<double>(x[c * sx]) - z.max));
  }
  return out;
}

// The cell's loss term (LossDesc's definitions); t is the cell's class
// index (Target an integer) or its C target values at stride st.
template <typename T, typename Target>
DISTCONV_HOST_DEVICE LossCellTerm loss_cell_term(const LossCellDesc& d,
                                                 const T* x, std::int64_t sx,
                                                 const Target* t,
                                                 std::int64_t st) {
  if (d.kind == LossKind::kMeanSquaredError) {
    return mse_cell_term(d, x, sx, t, st);
  }
  if (d.kind == LossKind::kCrossEntropyIndices) {
    LossCellTerm out;
    if (!d.counts(static_cast<std::int64_t>(t[0]), out.bad)) return out;
  }
  return cross_entropy_cell_term(d, cell_shift(d.classes, x, sx), x, sx, t, st);
}

// Only whether the cell's class index counts (count 0 or 1) and is bad.
template <typename Target>
DISTCONV_HOST_DEVICE LossCellTerm loss_cell_count(const LossCellDesc& d,
                                                  const Target* t) {
  LossCellTerm out;
  out.count = d.counts(static_cast<std::int64_t>(t[0]), out.bad) ? 1 : 0;
  return out;
}

// What a pass over the cells adds up: each cell's loss_cell_term, or only
// its loss_cell_count (class indices).
enum class LossTerms { kLossesAndCounts, kCountsOnly };

// Mean squared error's gradient of a cell, scaled by w: 2 w (x_c - t_c).
template <typename T, typename Target>
DISTCONV_HOST_DEVICE void mse_cell_gradient(const LossCellDesc& d, double w,
                                            const T* x, std::int64_t sx,
                                            const Target* t, std::int64_t st,
                                            T* dx, std::int64_t sdx) {
  for (std::int64_t c = 0; c < d.classes; ++c) {
    dx[c * sdx] = static_cast<T>(
        2 * w *
        (static_cast<double>(x[c * sx]) - static_cast<double>(t[c * st])));
  }
}

// Cross-entropy's gradient of a cell whose shift is z, scaled by w:
// w (softmax(x)_c * sum_k t_k - t_c), t one-hot for a counted class index
// and 0 for an ignored or bad one. `kept`: the cell's exponentials
// exp(x_c - max), or null to compute them again.
template <typename T, typename Target>
DISTCONV_HOST_DEVICE void cross_entropy_cell_gradient(
    const LossCellDesc& d, double w, const CellShift& z, const double* kept,
    const T* x, std::int64_t sx, const Target* t, std::int64_t st, T* dx,
    std::int64_t sdx) {
  const std::int64_t channels = d.classes;
  const bool indices = d.kind == LossKind::kCrossEntropyIndices;
  double mass = 0;
  std::int64_t k = -1;
  if (indices) {
    double bad = 0;
    k = static_cast<std::int64_t>(t[0]);
    if (d.counts(k, bad)) {
      mass = 1;
    } else {
      k = -1;
    }
  } else {
    for (std::int64_t c = 0; c < channels; ++c) {
      mass += static_cast<double>(t[c * st]);
    }
  }
  const double scale = w * mass / z.sum;
  for (std::int64_t c = 0; c < channels; ++c) {
    const double tc =
        indices ? (c == k ? 1.0 : 0.0) : static_cast<double>(t[c * st]);
    const double e =
        kept != nullptr ? kept[c] : exp(static_cast<double>(x[c * sx]) - z.max);
    dx[c * sdx] = static_cast<T>(e * scale - w * tc);
  }
}

// dx = d loss / d x of the cell, the loss scaled by w (the reduction's
// factor): mse_cell_gradient or cross_entropy_cell_gradient.
template <typename T, typename Target>
DISTCONV_HOST_DEVICE void loss_cell_gradient(const LossCellDesc& d, double w,
                                             const T* x, std::int64_t sx,
                                             const Target* t, std::int64_t st,
                                             T* dx, std::int64_t sdx) {
  if (d.kind == LossKind::kMeanSquaredError) {
    mse_cell_gradient(d, w, x, sx, t, st, dx, sdx);
    return;
  }
  double kept[kKeptExps];
  const double* k = d.classes <= kKeptExps ? kept : nullptr;
  const CellShift z = cell_shift(d.classes, x, sx, k ? kept : nullptr);
  cross_entropy_cell_gradient(d, w, z, k, x, sx, t, st, dx, sdx);
}

// loss_cell_term and loss_cell_gradient of one cell at once, their values
// bit for bit: cross-entropy's exponentials are computed once for both.
// Every value of x is read before dx is written (dx may be x).
template <typename T, typename Target>
DISTCONV_HOST_DEVICE LossCellTerm loss_cell_term_and_gradient(
    const LossCellDesc& d, double w, const T* x, std::int64_t sx,
    const Target* t, std::int64_t st, T* dx, std::int64_t sdx) {
  if (d.kind == LossKind::kMeanSquaredError) {
    const LossCellTerm out = mse_cell_term(d, x, sx, t, st);
    mse_cell_gradient(d, w, x, sx, t, st, dx, sdx);
    return out;
  }
  double kept[kKeptExps];
  const double* k = d.classes <= kKeptExps ? kept : nullptr;
  const CellShift z = cell_shift(d.classes, x, sx, k ? kept : nullptr);
  LossCellTerm out;
  if (d.kind != LossKind::kCrossEntropyIndices ||
      d.counts(static_cast<std::int64_t>(t[0]), out.bad)) {
    out = cross_entropy_cell_term(d, z, x, sx, t, st);
  }
  cross_entropy_cell_gradient(d, w, z, k, x, sx, t, st, dx, sdx);
  return out;
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CHANNEL_CELLS_H_
