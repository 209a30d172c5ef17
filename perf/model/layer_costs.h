// The costs of the operations other than (transposed) convolutions:
// pooling, batch and group normalisation, linear interpolation, adaptive
// pooling and the element-wise layers (op_cost() dispatches to them).
#ifndef DISTCONV_PERF_MODEL_LAYER_COSTS_H_
#define DISTCONV_PERF_MODEL_LAYER_COSTS_H_

#include "perf/model/machine.h"
#include "perf/model/op_cost.h"

namespace distconv {
namespace model {

Cost pooling_cost(const Op& op, const Distribution& src, const Machine& m);
Cost batch_norm_cost(const Distribution& src, const Machine& m);
Cost group_norm_cost(const Op& op, const Distribution& src, const Machine& m);
Cost interpolate_cost(const Op& op, const Distribution& src, const Machine& m);
Cost adaptive_pool_cost(const Op& op, const Distribution& src,
                        const Machine& m);
Cost elementwise_cost(const Op& op, const Distribution& src, const Machine& m);

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_LAYER_COSTS_H_
