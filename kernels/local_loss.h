// LocalLoss<T>: the losses' per-rank loops (layers/loss.h) over the
// (n, spatial) cells of strided (N, C, spatial...) views in host memory,
// running kernels/channel_cells.h's cell functions (the CUDA kernels run
// the same); cross-entropy runs their arithmetic a row of cells at a
// time, vectorised across the cells (kernels/internal/cross_entropy_rows.h).
// The sums come back per sample of the views: values[n] the loss summed
// over sample n's cells, values[N + n] their count, and
// values[2N] the count of bad class indices. The target views hold T (MSE,
// cross-entropy with probabilities) or std::int64_t (class indices). Made
// for one cell descriptor (the layer's kernel in host memory; the GPU's,
// with the same calls, is kernels/cuda/loss.h). Defined for every element
// type of distconv/element_types.h.
//
//   LocalLoss<float> loss(loss_cell_desc(desc, classes));
//   std::vector<double> s = loss.sums(LossTerms::kLossesAndCounts, x, t);
//   loss.gradient(1.0 / count, x, t, dx);
#ifndef DISTCONV_KERNELS_LOCAL_LOSS_H_
#define DISTCONV_KERNELS_LOCAL_LOSS_H_

#include <vector>

#include "distconv/strided_view.h"
#include "kernels/channel_cells.h"

namespace distconv {

template <typename T>
class LocalLoss {
 public:
  explicit LocalLoss(const LossCellDesc& cells) : cells_(cells) {}

  // Each cell's loss_cell_term (or loss_cell_count), summed per sample.
  // kCountsOnly counts class indices (Target an integer); with any other
  // target it counts nothing.
  template <typename Target>
  std::vector<double> sums(LossTerms what, const StridedView<const T>& x,
                           const StridedView<const Target>& t) const;
  // sums(kLossesAndCounts) and gradient() in one pass over the cells.
  template <typename Target>
  std::vector<double> sums_and_gradient(double w, const StridedView<const T>& x,
                                        const StridedView<const Target>& t,
                                        const StridedView<T>& dx) const;
  // dx = the gradient of every cell's loss, scaled by w (written).
  template <typename Target>
  void gradient(double w, const StridedView<const T>& x,
                const StridedView<const Target>& t,
                const StridedView<T>& dx) const;

 private:
  LossCellDesc cells_;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_LOSS_H_
