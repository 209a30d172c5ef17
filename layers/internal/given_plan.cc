#include "layers/internal/given_plan.h"

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "layers/internal/plan_fingerprints.h"

namespace distconv::internal {

void check_given_plan(const ProcessGrid& grid, const Distribution& planned,
                      int plan_rank, const Fingerprint& fingerprint,
                      const std::function<void()>& more) {
  run_collectively(grid.comm(), [&] {
    check_grid(planned, grid.shape(), "planned input");
    require(plan_rank == grid.rank(), ErrorKind::kInvalidArgument, "a ",
            fingerprint.object(), " plan for rank ", plan_rank,
            " given to rank ", grid.rank());
    if (more) more();
  });
  agree(grid.comm(), fingerprint);
}

void check_given_shard_plan(const ProcessGrid& grid, const ShardPlan& plan,
                            const char* element, const char* space,
                            const std::function<ShardPlan()>& replan) {
  std::optional<Distribution> planned;
  run_collectively(grid.comm(), [&] {
    require(!plan.tensors.empty(), ErrorKind::kInvalidArgument, "the ",
            plan.layer, " plan has no tensors");
    planned = plan.tensors.front().layout.distribution();
  });
  check_given_plan(
      grid, *planned, plan.rank, fingerprint(plan, element, space), [&] {
        require(plan == replan(), ErrorKind::kInvalidArgument, "the ",
                plan.layer,
                " plan was not made for the description given with it");
      });
}

}  // namespace distconv::internal
