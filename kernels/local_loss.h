// LocalLoss<T, Target>: the losses' per-rank loops (layers/loss.h) over the
// (n, spatial) cells of strided (N, C, spatial...) views in host memory,
// running kernels/channel_cells.h's cell functions (the CUDA kernels run
// the same); cross-entropy runs their arithmetic a row of cells at a
// time, vectorised across the cells (kernels/internal/cross_entropy_rows.h).
// The sums come back per sample of the views: values[n] the loss summed
// over sample n's cells, values[N + n] their count, and
// values[2N] the count of bad class indices. Target is T (MSE,
// cross-entropy with probabilities) or std::int64_t (class indices).
// Defined for every element type of distconv/element_types.h.
//
//   LossCellDesc d = loss_cell_desc(desc, classes);
//   std::vector<double> s = LocalLoss<float, std::int64_t>::sums(
//       d, LossTerms::kLossesAndCounts, x, t);
//   LocalLoss<float, std::int64_t>::gradient(d, 1.0 / count, x, t, dx);
#ifndef DISTCONV_KERNELS_LOCAL_LOSS_H_
#define DISTCONV_KERNELS_LOCAL_LOSS_H_

#include <vector>

#include "distconv/strided_view.h"
#include "kernels/channel_cells.h"

namespace distconv {

template <typename T, typename Target>
struct LocalLoss {
  // Each cell's loss_cell_term (or loss_cell_count), summed per sample.
  // kCountsOnly counts class indices (Target an integer); with any other
  // target it counts nothing.
  static std::vector<double> sums(const LossCellDesc& d, LossTerms what,
                                  const StridedView<const T>& x,
                                  const StridedView<const Target>& t);
  // sums(kLossesAndCounts) and gradient() in one pass over the cells.
  static std::vector<double> sums_and_gradient(
      const LossCellDesc& d, double w, const StridedView<const T>& x,
      const StridedView<const Target>& t, const StridedView<T>& dx);
  // dx = the gradient of every cell's loss, scaled by w (written).
  static void gradient(const LossCellDesc& d, double w,
                       const StridedView<const T>& x,
                       const StridedView<const Target>& t,
                       const StridedView<T>& dx);
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_LOSS_H_
