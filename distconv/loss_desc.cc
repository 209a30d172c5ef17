#include "distconv/loss_desc.h"

#include "distconv/error.h"

namespace distconv {

void LossDesc::validate(const Shape& prediction) const {
  const int n = prediction.ndims();
  require(n == 4 || n == 5, ErrorKind::kInvalidArgument, "prediction shape ",
          prediction, " is not (N, C, H, W) or (N, C, D, H, W)");
  for (int d = 0; d < n; ++d) {
    require(prediction[d] >= 0, ErrorKind::kInvalidArgument,
            "prediction shape ", prediction, ": extents must be >= 0");
  }
  require(prediction[1] >= 1, ErrorKind::kInvalidArgument, "prediction shape ",
          prediction, " must have at least one channel");
  require(!ignore_index.has_value() || takes_indices(),
          ErrorKind::kInvalidArgument, "ignore_index applies to ",
          to_string(LossKind::kCrossEntropyIndices), " only, not to ",
          to_string(kind));
}

Shape LossDesc::target_shape(const Shape& prediction) const {
  validate(prediction);
  Shape t = prediction;
  if (takes_indices()) t[1] = 1;
  return t;
}

const char* to_string(SoftmaxKind kind) {
  switch (kind) {
    case SoftmaxKind::kSoftmax:
      return "softmax";
    case SoftmaxKind::kLogSoftmax:
      return "log-softmax";
  }
  return "unknown softmax";
}

const char* to_string(LossKind kind) {
  switch (kind) {
    case LossKind::kCrossEntropyIndices:
      return "cross-entropy (class indices)";
    case LossKind::kCrossEntropyProbabilities:
      return "cross-entropy (probabilities)";
    case LossKind::kMeanSquaredError:
      return "mean squared error";
  }
  return "unknown loss";
}

const char* to_string(LossReduction reduction) {
  switch (reduction) {
    case LossReduction::kMean:
      return "mean";
    case LossReduction::kSum:
      return "sum";
  }
  return "unknown reduction";
}

}  // namespace distconv
