#include "distconv/internal/layer_checks.h"

#include "distconv/error.h"

namespace distconv::internal {

void check_grid(const Distribution& dist, const Shape& grid_shape,
                const char* what) {
  require(dist.grid_shape() == grid_shape, ErrorKind::kGridMismatch, what,
          " distribution over grid ", dist.grid_shape(),
          " used with a process grid ", grid_shape);
}

void check_unsplit_channels(const Shape& grid_shape, const char* layer) {
  require(grid_shape.ndims() < 2 || grid_shape[1] == 1,
          ErrorKind::kUnsupported, "the grid ", grid_shape,
          " splits channels; ", layer,
          " supports splits of N and spatial dimensions only (channel/filter "
          "parallelism is not supported yet)");
}

void check_plan_rank(const Distribution& dist, int rank) {
  require(rank >= 0 && rank < dist.num_parts(), ErrorKind::kInvalidArgument,
          "rank ", rank, " outside grid ", dist.grid_shape(), " of ",
          dist.num_parts(), " parts");
}

void check_plan_layout(const HaloLayout& have, const HaloLayout& want,
                       const char* what, const char* layer) {
  require(have == want, ErrorKind::kShapeMismatch, what,
          " tensor's layout (global ", have.distribution().global_shape(),
          ") is not the ", layer, "'s ", what,
          " layout; allocate it from the plan's ", what, "_layout()");
}

}  // namespace distconv::internal
