// Internal: cross-entropy on the host over a row of cells at once (a row:
// up to kRowCells consecutive cells along the last spatial dimension of
// strided (N, C, spatial...) views), vectorised across the row's cells:
// each channel's values of the row are one vector loop, and the
// exponentials and logarithms are the C library's vector variants
// (glibc's libmvec) where it has them, built per instruction set
// (distconv/internal/target_clones.h). kernels/local_loss.cc runs it for
// both cross-entropy kinds; the math is kernels/channel_cells.h's
// (cross_entropy_cell_term, cross_entropy_cell_gradient), per cell, in
// double, the cell's maximum subtracted first, each output rounded once
// to T.
//
// The vector exponentials are within a few units in the last place of the
// scalar ones, so a value may differ from the per-cell functions' (and the
// CUDA kernels') in its last bits. Every pass of the host loops runs this
// one function, so they agree with each other bit for bit: the terms of a
// row are the same whether its gradient is written or not, and so is the
// gradient.
//
//   CellRow<float, std::int64_t> row{cells, x, sxc, sxw, t, stc, stw};
//   LossCellTerm terms[kRowCells];
//   cross_entropy_row(d, 0.0, RowOutputs::kTerms, row, terms);
#ifndef DISTCONV_KERNELS_INTERNAL_CROSS_ENTROPY_ROWS_H_
#define DISTCONV_KERNELS_INTERNAL_CROSS_ENTROPY_ROWS_H_

#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/shape.h"
#include "kernels/channel_cells.h"

namespace distconv::internal {

// The most cells of one row call.
inline constexpr Index kRowCells = 64;

// `cells` cells (at most kRowCells) of the prediction x, the target t
// (class indices, Target an integer, or C probabilities) and the gradient
// dx (null when not written): each view's pointer to channel 0 of the
// row's first cell, its channel stride and its stride from cell to cell.
template <typename T, typename Target>
struct CellRow {
  Index cells = 0;
  const T* x = nullptr;
  Index x_channel = 0, x_cell = 0;
  const Target* t = nullptr;
  Index t_channel = 0, t_cell = 0;
  T* dx = nullptr;
  Index dx_channel = 0, dx_cell = 0;
};

// What a call computes: each cell's term (its loss, count and bad index,
// as loss_cell_term), the gradient (scaled by w, as loss_cell_gradient;
// written to dx) or both.
enum class RowOutputs { kTerms, kGradient, kTermsAndGradient };

// Writes terms[j] for each cell j of the row (unless out is kGradient;
// terms may then be null) and the row's gradient (unless out is kTerms). d.kind
// is one of the cross-entropy kinds. Every value of x is read before dx is
// written, so dx may be x.
#define DISTCONV_DECLARE_CROSS_ENTROPY_ROW(T)                             \
  void cross_entropy_row(const LossCellDesc& d, double w, RowOutputs out, \
                         const CellRow<T, T>& row, LossCellTerm* terms);  \
  void cross_entropy_row(const LossCellDesc& d, double w, RowOutputs out, \
                         const CellRow<T, std::int64_t>& row,             \
                         LossCellTerm* terms);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_DECLARE_CROSS_ENTROPY_ROW)
#undef DISTCONV_DECLARE_CROSS_ENTROPY_ROW

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_INTERNAL_CROSS_ENTROPY_ROWS_H_
