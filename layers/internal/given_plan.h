// Internal: the check an executor makes on its plan, run on every rank
// together before any of the layer's collectives: a plan made for another
// rank or grid on one rank throws the same distconv::Error on every rank,
// and so do ranks whose plans describe different layers (their
// fingerprints differ: plan_fingerprints.h).
//
//   check_given_plan(grid, plan.src_layout().distribution(), plan.rank,
//                    fingerprint(plan, element_name<T>()));
//
// plan_collectively() makes a plan from a description on every rank
// together, so a description that is invalid on one rank only throws
// everywhere rather than leaving the others in the next collective.
#ifndef DISTCONV_LAYERS_INTERNAL_GIVEN_PLAN_H_
#define DISTCONV_LAYERS_INTERNAL_GIVEN_PLAN_H_

#include <functional>
#include <optional>
#include <utility>

#include "distconv/distribution.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/process_grid.h"
#include "layers/shard_plan.h"

namespace distconv::internal {

// kGridMismatch unless `planned` (the plan's input distribution) lies over
// `grid`'s shape; kInvalidArgument unless `plan_rank` is this rank; then
// `more` (further checks of the layer's own), all collectively; then the
// agreement on `fingerprint` (its object names the layer in messages).
void check_given_plan(const ProcessGrid& grid, const Distribution& planned,
                      int plan_rank, const Fingerprint& fingerprint,
                      const std::function<void()>& more = {});

// For the layers that compute from their own shard: check_given_plan on
// the plan's first tensor and its fingerprint, with kInvalidArgument
// unless `plan` is the one `replan()` makes from the description given
// with it.
void check_given_shard_plan(const ProcessGrid& grid, const ShardPlan& plan,
                            const char* element, const char* space,
                            const std::function<ShardPlan()>& replan);
// The same for a layer of T in Space.
template <typename T, typename Space>
void check_given_shard_plan(const ProcessGrid& grid, const ShardPlan& plan,
                            const std::function<ShardPlan()>& replan) {
  check_given_shard_plan(grid, plan, element_name<T>(), Space::kName, replan);
}

template <typename Make>
auto plan_collectively(const ProcessGrid& grid, Make make) -> decltype(make()) {
  std::optional<decltype(make())> plan;
  run_collectively(grid.comm(), [&] { plan.emplace(make()); });
  return std::move(*plan);
}

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_GIVEN_PLAN_H_
