// SoftmaxKind and LossDesc: what the softmax and loss layers compute, as
// plain values. Pure: no MPI, no kernels.
//
// Tensors are (N, C, [D,] H, W); a "cell" is one (n, spatial) position, and
// its C values are the channels the softmax and the cross-entropy act on.
//
//  - SoftmaxKind::kSoftmax:    y_c = exp(x_c) / sum_k exp(x_k)
//  - SoftmaxKind::kLogSoftmax: y_c = x_c - log sum_k exp(x_k)
//
// Losses of a prediction x (N, C, spatial...) against a target, per cell
// (as PyTorch's cross_entropy and mse_loss):
//  - kCrossEntropyIndices: target class t in [0, C) per cell (an int64
//    tensor of shape (N, 1, spatial...)): loss = -log softmax(x)_t. A cell
//    whose target equals `ignore_index` (when set) counts for nothing: it
//    adds no loss, no gradient and is not counted by kMean.
//  - kCrossEntropyProbabilities: target probabilities t (N, C, spatial...):
//    loss = -sum_c t_c log softmax(x)_c (t need not sum to 1).
//  - kMeanSquaredError: target (N, C, spatial...): loss = sum_c (x_c - t_c)^2
//    per cell, i.e. one term per element.
// Reductions:
//  - kMean: the sum of the terms divided by their count: the number of
//    counted cells (cross-entropy: N * spatial less ignored cells) or of
//    elements (mean squared error: N * C * spatial). No counted cell: 0.
//  - kSum: the sum of the terms.
//
//   LossDesc ce;                                  // cross-entropy, indices
//   ce.ignore_index = 255;                        // unlabelled pixels
//   ce.target_shape({2, 5, 64, 64});              // {2, 1, 64, 64}
#ifndef DISTCONV_LOSS_DESC_H_
#define DISTCONV_LOSS_DESC_H_

#include <cstdint>
#include <optional>

#include "distconv/shape.h"

namespace distconv {

enum class SoftmaxKind { kSoftmax, kLogSoftmax };

enum class LossKind {
  kCrossEntropyIndices,
  kCrossEntropyProbabilities,
  kMeanSquaredError,
};

enum class LossReduction { kMean, kSum };

struct LossDesc {
  LossKind kind = LossKind::kCrossEntropyIndices;
  LossReduction reduction = LossReduction::kMean;
  // kCrossEntropyIndices only: cells with this target are skipped.
  std::optional<std::int64_t> ignore_index;

  static LossDesc make(LossKind kind,
                       LossReduction reduction = LossReduction::kMean) {
    LossDesc d;
    d.kind = kind;
    d.reduction = reduction;
    return d;
  }

  // Whether the target holds class indices (int64) rather than values.
  bool takes_indices() const { return kind == LossKind::kCrossEntropyIndices; }
  // Throws distconv::Error naming the values unless `prediction` is a 2D or
  // 3D (N, C, spatial...) shape with C >= 1 and no negative extent, and the
  // options fit the kind.
  void validate(const Shape& prediction) const;
  // (N, 1, spatial...) for class indices, else the prediction's shape.
  Shape target_shape(const Shape& prediction) const;  // validates first
};

const char* to_string(SoftmaxKind kind);
const char* to_string(LossKind kind);
const char* to_string(LossReduction reduction);

}  // namespace distconv

#endif  // DISTCONV_LOSS_DESC_H_
