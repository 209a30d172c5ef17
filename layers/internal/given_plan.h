// Internal: the check an executor makes on a plan made beforehand, run on
// every rank together, so a plan made for another rank or grid on one rank
// throws the same distconv::Error on every rank, before any collective.
//
//   check_given_plan(grid, plan.src_layout().distribution(), plan.rank,
//                    "pooling");
#ifndef DISTCONV_LAYERS_INTERNAL_GIVEN_PLAN_H_
#define DISTCONV_LAYERS_INTERNAL_GIVEN_PLAN_H_

#include <functional>

#include "distconv/distribution.h"
#include "distconv/process_grid.h"
#include "layers/shard_plan.h"

namespace distconv::internal {

// kGridMismatch unless `planned` (the plan's input distribution) lies over
// `grid`'s shape; kInvalidArgument unless `plan_rank` is this rank; then
// `more` (further checks of the layer's own), all collectively.
void check_given_plan(const ProcessGrid& grid, const Distribution& planned,
                      int plan_rank, const char* layer,
                      const std::function<void()>& more = {});

// For the layers that compute from their own shard: check_given_plan on
// the plan's first tensor, then kInvalidArgument unless `plan` is the one
// `replan()` makes from the description given with it.
void check_given_shard_plan(const ProcessGrid& grid, const ShardPlan& plan,
                            const std::function<ShardPlan()>& replan);

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_GIVEN_PLAN_H_
