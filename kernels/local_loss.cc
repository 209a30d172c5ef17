#include "kernels/local_loss.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "distconv/element_types.h"
#include "kernels/internal/cell_walk.h"
#include "kernels/internal/cross_entropy_rows.h"

namespace distconv {
namespace {

// Per sample n, the loss at n and the count at samples + n; last, the
// count of bad class indices.
struct SampleSums {
  explicit SampleSums(Index samples)
      : samples(samples), values(2 * samples + 1, 0.0) {}
  void add(Index n, const LossCellTerm& term) {
    values[n] += term.loss;
    values[samples + n] += term.count;
    values[2 * samples] += term.bad;
  }
  Index samples;
  std::vector<double> values;
};

// Cross-entropy over every row of the views, kRowCells cells at a time
// (internal::cross_entropy_row): each cell's term added to `sums` in cell
// order unless `out` is kGradient, the gradient written to *dx unless
// `out` is kTerms (dx may then be null).
template <typename T, typename Target>
void cross_entropy_rows(const LossCellDesc& d, double w,
                        internal::RowOutputs out, const StridedView<const T>& x,
                        const StridedView<const Target>& t,
                        const StridedView<T>* dx, SampleSums* sums) {
  const Shape& extent = x.extent();
  const int last = extent.ndims() - 1;
  const Shape& dx_strides = dx != nullptr ? dx->strides() : x.strides();
  T* const dx_data = dx != nullptr ? dx->data() : nullptr;
  const Index xw = x.strides()[last], tw = t.strides()[last],
              dw = dx_strides[last];
  internal::for_each_row<3>(
      extent, {x.strides(), t.strides(), dx_strides},
      [&](Index n, const std::array<Index, 3>& at) {
        LossCellTerm terms[internal::kRowCells];
        for (Index j = 0; j < extent[last]; j += internal::kRowCells) {
          internal::CellRow<T, Target> row;
          row.cells = std::min(internal::kRowCells, extent[last] - j);
          row.x = x.data() + at[0] + j * xw;
          row.x_channel = x.strides()[1];
          row.x_cell = xw;
          row.t = t.data() + at[1] + j * tw;
          row.t_channel = t.strides()[1];
          row.t_cell = tw;
          if (dx_data != nullptr) row.dx = dx_data + at[2] + j * dw;
          row.dx_channel = dx_strides[1];
          row.dx_cell = dw;
          internal::cross_entropy_row(d, w, out, row, terms);
          if (out == internal::RowOutputs::kGradient) continue;
          for (Index c = 0; c < row.cells; ++c) sums->add(n, terms[c]);
        }
      });
}

// Each cell's loss_cell_count, a row at a time: the class indices that
// count and the bad ones, counted in a loop without branches (Target an
// integer; nothing counts otherwise).
template <typename Target>
void count_rows(const LossCellDesc& d, const Shape& extent,
                const StridedView<const Target>& t, SampleSums& sums) {
  if constexpr (std::is_integral_v<Target>) {
    const int last = extent.ndims() - 1;
    const Index tw = t.strides()[last];
    const auto ignored = static_cast<std::int64_t>(d.ignore_index);
    internal::for_each_row<1>(
        extent, {t.strides()}, [&](Index n, const std::array<Index, 1>& at) {
          const Target* row = t.data() + at[0];
          Index counted = 0, bad = 0;
#pragma omp simd reduction(+ : counted, bad)
          for (Index j = 0; j < extent[last]; ++j) {
            const auto k = static_cast<std::int64_t>(row[j * tw]);
            const bool skip = d.has_ignore && k == ignored;
            const bool in = k >= 0 && k < d.classes;
            counted += !skip && in;
            bad += !skip && !in;
          }
          sums.add(n, LossCellTerm{0, double(counted), double(bad)});
        });
  }
}

}  // namespace

template <typename T>
template <typename Target>
std::vector<double> LocalLoss<T>::sums(
    LossTerms what, const StridedView<const T>& x,
    const StridedView<const Target>& t) const {
  const LossCellDesc& d = cells_;
  SampleSums out(x.extent()[0]);
  if (what == LossTerms::kCountsOnly) {
    count_rows(d, x.extent(), t, out);
    return std::move(out.values);
  }
  if (d.kind != LossKind::kMeanSquaredError) {
    cross_entropy_rows(d, 0.0, internal::RowOutputs::kTerms, x, t,
                       static_cast<const StridedView<T>*>(nullptr), &out);
    return std::move(out.values);
  }
  const Index sx = x.strides()[1], st = t.strides()[1];
  internal::for_each_cell<2>(
      x.extent(), {x.strides(), t.strides()},
      [&](Index n, const std::array<Index, 2>& at) {
        out.add(n,
                loss_cell_term(d, x.data() + at[0], sx, t.data() + at[1], st));
      });
  return std::move(out.values);
}

template <typename T>
template <typename Target>
std::vector<double> LocalLoss<T>::sums_and_gradient(
    double w, const StridedView<const T>& x, const StridedView<const Target>& t,
    const StridedView<T>& dx) const {
  const LossCellDesc& d = cells_;
  SampleSums out(x.extent()[0]);
  if (d.kind != LossKind::kMeanSquaredError) {
    cross_entropy_rows(d, w, internal::RowOutputs::kTermsAndGradient, x, t, &dx,
                       &out);
    return std::move(out.values);
  }
  const Index sx = x.strides()[1], st = t.strides()[1], sdx = dx.strides()[1];
  internal::for_each_cell<3>(
      x.extent(), {x.strides(), t.strides(), dx.strides()},
      [&](Index n, const std::array<Index, 3>& at) {
        out.add(n, loss_cell_term_and_gradient(d, w, x.data() + at[0], sx,
                                               t.data() + at[1], st,
                                               dx.data() + at[2], sdx));
      });
  return std::move(out.values);
}

template <typename T>
template <typename Target>
void LocalLoss<T>::gradient(double w, const StridedView<const T>& x,
                            const StridedView<const Target>& t,
                            const StridedView<T>& dx) const {
  const LossCellDesc& d = cells_;
  if (d.kind != LossKind::kMeanSquaredError) {
    cross_entropy_rows(d, w, internal::RowOutputs::kGradient, x, t, &dx,
                       static_cast<SampleSums*>(nullptr));
    return;
  }
  const Index sx = x.strides()[1], st = t.strides()[1], sdx = dx.strides()[1];
  internal::for_each_cell<3>(
      x.extent(), {x.strides(), t.strides(), dx.strides()},
      [&](Index, const std::array<Index, 3>& at) {
        loss_cell_gradient(d, w, x.data() + at[0], sx, t.data() + at[1], st,
                           dx.data() + at[2], sdx);
      });
}

// Every member for both kinds of target.
#define DISTCONV_TARGET(T, Target)                                           \
  template std::vector<double> LocalLoss<T>::sums(                           \
      LossTerms, const StridedView<const T>&,                                \
      const StridedView<const Target>&) const;                               \
  template std::vector<double> LocalLoss<T>::sums_and_gradient(              \
      double, const StridedView<const T>&, const StridedView<const Target>&, \
      const StridedView<T>&) const;                                          \
  template void LocalLoss<T>::gradient(double, const StridedView<const T>&,  \
                                       const StridedView<const Target>&,     \
                                       const StridedView<T>&) const;
#define DISTCONV_INSTANTIATE(T) \
  template class LocalLoss<T>;  \
  DISTCONV_TARGET(T, T)         \
  DISTCONV_TARGET(T, std::int64_t)
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE
#undef DISTCONV_TARGET

}  // namespace distconv
