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

void check_resize(const char* what, const Shape& src_shape,
                  const Shape& size) {
  const int k = size.ndims();
  require(k >= 1 && k <= 3, ErrorKind::kInvalidArgument, what,
          " has 1 to 3 spatial dimensions, size ", size, " has ", k);
  require(src_shape.ndims() == k + 2, ErrorKind::kShapeMismatch,
          "input shape ", src_shape, " does not fit output size ", size,
          " (expected N, C and ", k, " spatial extents)");
  require(src_shape[0] >= 0 && src_shape[1] >= 0, ErrorKind::kInvalidArgument,
          "input shape ", src_shape, " must be >= 0 in N and C");
  for (int d = 0; d < k; ++d) {
    require(src_shape[d + 2] >= 1 && size[d] >= 1, ErrorKind::kInvalidArgument,
            what, " of ", src_shape, " to size ", size,
            ": spatial extents must be >= 1 on both sides");
  }
}

void check_plan_layout(const HaloLayout& have, const HaloLayout& want,
                       const char* what, const char* layer) {
  require(have == want, ErrorKind::kShapeMismatch, what,
          " tensor's layout (global ", have.distribution().global_shape(),
          ") is not the ", layer, "'s ", what,
          " layout; allocate it from the plan's ", what, "_layout()");
}

}  // namespace distconv::internal
