#include "layers/internal/given_plan.h"

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

void check_given_plan(const ProcessGrid& grid, const Distribution& planned,
                      int plan_rank, const char* layer,
                      const std::function<void()>& more) {
  run_collectively(grid.comm(), [&] {
    check_grid(planned, grid.shape(), "planned input");
    require(plan_rank == grid.rank(), ErrorKind::kInvalidArgument, "a ", layer,
            " plan for rank ", plan_rank, " given to rank ", grid.rank());
    if (more) more();
  });
}

void check_given_shard_plan(const ProcessGrid& grid, const ShardPlan& plan,
                            const std::function<ShardPlan()>& replan) {
  require(!plan.tensors.empty(), ErrorKind::kInvalidArgument, "the ",
          plan.layer, " plan has no tensors");
  check_given_plan(grid, plan.tensors.front().layout.distribution(), plan.rank,
                   plan.layer.c_str(), [&] {
                     require(plan == replan(), ErrorKind::kInvalidArgument,
                             "the ", plan.layer,
                             " plan was not made for the description given "
                             "with it");
                   });
}

}  // namespace distconv::internal
