// Reference losses (LossDesc: cross-entropy on class indices or on
// probabilities, mean squared error; mean or sum): plain loops in double,
// the oracle of the distributed loss. 2D and 3D; float and double inputs.
//
// Arrays are dense row-major: the prediction (N, C, spatial...), the target
// LossDesc::target_shape(prediction) (class indices as int64, or values of
// the prediction's type). Cross-entropy takes logits and uses log-sum-exp
// with the cell's maximum subtracted. The overload must match the kind
// (indices for kCrossEntropyIndices), or it throws kInvalidArgument; so does
// a class index outside [0, C) that is not the ignore_index.
//
//   LossDesc mse = LossDesc::make(LossKind::kMeanSquaredError);
//   std::vector<double> per_sample(2);
//   double l = reference::loss_fwd(mse, Shape{2, 3, 4, 4}, x, t,
//                                  per_sample.data());
//   reference::loss_bwd(mse, Shape{2, 3, 4, 4}, x, t, dx);
#ifndef DISTCONV_KERNELS_REFERENCE_LOSS_H_
#define DISTCONV_KERNELS_REFERENCE_LOSS_H_

#include <cstdint>

#include "distconv/loss_desc.h"
#include "distconv/shape.h"

namespace distconv::reference {

// Returns the loss with desc.reduction. per_sample (N entries; may be null)
// gets each sample's loss with the same reduction over that sample's terms
// alone (kMean: its sum over its own count; 0 if it counts none).
template <typename T>
double loss_fwd(const LossDesc& desc, const Shape& prediction_shape,
                const T* prediction, const T* target, double* per_sample);
template <typename T>
double loss_fwd(const LossDesc& desc, const Shape& prediction_shape,
                const T* prediction, const std::int64_t* target,
                double* per_sample);

// diff_prediction = d loss_fwd / d prediction (overwritten).
template <typename T>
void loss_bwd(const LossDesc& desc, const Shape& prediction_shape,
              const T* prediction, const T* target, T* diff_prediction);
template <typename T>
void loss_bwd(const LossDesc& desc, const Shape& prediction_shape,
              const T* prediction, const std::int64_t* target,
              T* diff_prediction);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_LOSS_H_
