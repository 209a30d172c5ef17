#include "kernels/internal/cross_entropy_rows.h"

#include <math.h>

#include <type_traits>

#include "distconv/internal/target_clones.h"

#if defined(__x86_64__) && defined(__GLIBC__) && defined(DISTCONV_HAS_CLONES)
// glibc declares the vector variants of exp and log (libmvec, linked
// through libm) only under -ffast-math; declared here, GCC calls them from
// the simd loops below, as wide as each clone's instruction set.
extern "C" {
#pragma omp declare simd notinbranch
double exp(double) noexcept;
#pragma omp declare simd notinbranch
double log(double) noexcept;
}
#endif

namespace distconv::internal {
namespace {

// Per cell of the row, in the vector loops' arrays.
struct RowCells {
  double max[kRowCells];
  double sum[kRowCells];               // sum_c exp(x_c - max)
  double mass[kRowCells];              // sum_c t_c (1 or 0 for class indices)
  Index index[kRowCells];              // class index; 0 where it does not count
  double kept[kKeptExps * kRowCells];  // exp(x_c - max) at c * kRowCells + j
};

// kUnit: every view's cell stride is 1 (channels first), known to the
// compiler so that its loads and stores are contiguous.
template <bool kUnit, typename T, typename Target>
inline __attribute__((always_inline)) void row_of(const LossCellDesc& d,
                                                  double w, RowOutputs out,
                                                  const CellRow<T, Target>& r,
                                                  LossCellTerm* terms) {
  constexpr bool kIndices = std::is_integral_v<Target>;
  const Index n = r.cells, channels = d.classes;
  const Index xw = kUnit ? 1 : r.x_cell, tw = kUnit ? 1 : r.t_cell;
  const Index dw = kUnit ? 1 : r.dx_cell;
  const bool keep = channels <= kKeptExps;
  RowCells cells;
  double* const m = cells.max;
  double* const s = cells.sum;
  double* const mass = cells.mass;
  Index* const k = cells.index;

  for (Index j = 0; j < n; ++j) {
    m[j] = -INFINITY;
    s[j] = 0;
    mass[j] = 0;
  }
  for (Index c = 0; c < channels; ++c) {
    const T* xr = r.x + c * r.x_channel;
#pragma omp simd
    for (Index j = 0; j < n; ++j) {
      const double v = static_cast<double>(xr[j * xw]);
      m[j] = m[j] < v ? v : m[j];
    }
  }
  for (Index c = 0; c < channels; ++c) {
    const T* xr = r.x + c * r.x_channel;
    if (keep) {
      double* e = cells.kept + c * kRowCells;
#pragma omp simd
      for (Index j = 0; j < n; ++j) {
        e[j] = exp(static_cast<double>(xr[j * xw]) - m[j]);
        s[j] += e[j];
      }
    } else {
#pragma omp simd
      for (Index j = 0; j < n; ++j) {
        s[j] += exp(static_cast<double>(xr[j * xw]) - m[j]);
      }
    }
  }

  // The target: which class indices count, or the probabilities' mass.
  if constexpr (kIndices) {
    for (Index j = 0; j < n; ++j) {
      LossCellTerm term;
      const auto kj = static_cast<std::int64_t>(r.t[j * tw]);
      const bool counts = d.counts(kj, term.bad);
      k[j] = counts ? kj : 0;
      mass[j] = counts ? 1 : 0;
      term.count = mass[j];
      if (out != RowOutputs::kGradient) terms[j] = term;
    }
  } else {
    for (Index c = 0; c < channels; ++c) {
      const Target* tr = r.t + c * r.t_channel;
#pragma omp simd
      for (Index j = 0; j < n; ++j) mass[j] += static_cast<double>(tr[j * tw]);
    }
  }

  if (out != RowOutputs::kGradient) {
    double loss[kRowCells], log_sum[kRowCells];
#pragma omp simd
    for (Index j = 0; j < n; ++j) log_sum[j] = log(s[j]);
    if constexpr (kIndices) {
#pragma omp simd
      for (Index j = 0; j < n; ++j) {
        const double xk = static_cast<double>(r.x[k[j] * r.x_channel + j * xw]);
        const double l = log_sum[j] - (xk - m[j]);
        loss[j] = mass[j] != 0 ? l : 0.0;
      }
    } else {
      for (Index j = 0; j < n; ++j) loss[j] = 0;
      for (Index c = 0; c < channels; ++c) {
        const T* xr = r.x + c * r.x_channel;
        const Target* tr = r.t + c * r.t_channel;
#pragma omp simd
        for (Index j = 0; j < n; ++j) {
          loss[j] += static_cast<double>(tr[j * tw]) *
                     (log_sum[j] - (static_cast<double>(xr[j * xw]) - m[j]));
        }
      }
    }
    for (Index j = 0; j < n; ++j) {
      if constexpr (kIndices) {
        terms[j].loss = loss[j];
      } else {
        terms[j] = LossCellTerm{loss[j], 1, 0};
      }
    }
  }

  if (out != RowOutputs::kTerms) {
    double scale[kRowCells], fresh[kRowCells];
#pragma omp simd
    for (Index j = 0; j < n; ++j) scale[j] = w * mass[j] / s[j];
    for (Index c = 0; c < channels; ++c) {
      const T* xr = r.x + c * r.x_channel;
      T* dr = r.dx + c * r.dx_channel;
      const double* e = cells.kept + c * kRowCells;
      if (!keep) {
#pragma omp simd
        for (Index j = 0; j < n; ++j) {
          fresh[j] = exp(static_cast<double>(xr[j * xw]) - m[j]);
        }
        e = fresh;
      }
      if constexpr (kIndices) {
#pragma omp simd
        for (Index j = 0; j < n; ++j) {
          const double tc = mass[j] != 0 && k[j] == c ? 1.0 : 0.0;
          dr[j * dw] = static_cast<T>(e[j] * scale[j] - w * tc);
        }
      } else {
        const Target* tr = r.t + c * r.t_channel;
#pragma omp simd
        for (Index j = 0; j < n; ++j) {
          const double tc = static_cast<double>(tr[j * tw]);
          dr[j * dw] = static_cast<T>(e[j] * scale[j] - w * tc);
        }
      }
    }
  }
}

template <typename T, typename Target>
inline __attribute__((always_inline)) void row(const LossCellDesc& d, double w,
                                               RowOutputs out,
                                               const CellRow<T, Target>& r,
                                               LossCellTerm* terms) {
  const bool unit = r.x_cell == 1 && r.t_cell == 1 &&
                    (out == RowOutputs::kTerms || r.dx_cell == 1);
  if (unit) {
    row_of<true>(d, w, out, r, terms);
  } else {
    row_of<false>(d, w, out, r, terms);
  }
}

}  // namespace

#define DISTCONV_DEFINE_CROSS_ENTROPY_ROW(T)                                   \
  DISTCONV_CLONES void cross_entropy_row(                                      \
      const LossCellDesc& d, double w, RowOutputs out, const CellRow<T, T>& r, \
      LossCellTerm* terms) {                                                   \
    row(d, w, out, r, terms);                                                  \
  }                                                                            \
  DISTCONV_CLONES void cross_entropy_row(                                      \
      const LossCellDesc& d, double w, RowOutputs out,                         \
      const CellRow<T, std::int64_t>& r, LossCellTerm* terms) {                \
    row(d, w, out, r, terms);                                                  \
  }
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_DEFINE_CROSS_ENTROPY_ROW)
#undef DISTCONV_DEFINE_CROSS_ENTROPY_ROW

}  // namespace distconv::internal
