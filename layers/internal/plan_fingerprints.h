// Internal: what every rank must describe alike for each layer (the
// fingerprint its constructor agrees on; distconv/internal/agreement.h):
// the element type and memory space, the description's fields, the input
// distribution, the options that shape communication, and the layouts.
// Rank-specific parts of a plan (its pieces, boxes, peers) are left out.
#ifndef DISTCONV_LAYERS_INTERNAL_PLAN_FINGERPRINTS_H_
#define DISTCONV_LAYERS_INTERNAL_PLAN_FINGERPRINTS_H_

#include "distconv/internal/agreement.h"
#include "layers/adaptive_pool_plan.h"
#include "layers/batch_norm_plan.h"
#include "layers/conv_plan.h"
#include "layers/deconv_plan.h"
#include "layers/group_norm_plan.h"
#include "layers/interpolate_plan.h"
#include "layers/pool_plan.h"
#include "layers/shard_plan.h"

namespace distconv::internal {

// element: element_name<T>(); space: Space::kName (layer_fingerprint).
Fingerprint fingerprint(const ConvPlan& plan, const char* element,
                        const char* space);
Fingerprint fingerprint(const DeconvPlan& plan, const char* element,
                        const char* space);
Fingerprint fingerprint(const PoolPlan& plan, const char* element,
                        const char* space);
Fingerprint fingerprint(const BatchNormPlan& plan, const char* element,
                        const char* space);
Fingerprint fingerprint(const GroupNormPlan& plan, const char* element,
                        const char* space);
Fingerprint fingerprint(const InterpolatePlan& plan, const char* element,
                        const char* space);
Fingerprint fingerprint(const AdaptivePoolPlan& plan, const char* element,
                        const char* space);
Fingerprint fingerprint(const ShardPlan& plan, const char* element,
                        const char* space);

// The fingerprint of a layer of T in Space planned as `plan`: every layer
// names its element type and memory space through this.
template <typename T, typename Space, typename Plan>
Fingerprint layer_fingerprint(const Plan& plan) {
  return fingerprint(plan, element_name<T>(), Space::kName);
}

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_PLAN_FINGERPRINTS_H_
