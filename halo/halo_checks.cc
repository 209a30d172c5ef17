#include "halo/halo_checks.h"

#include "distconv/error.h"

namespace distconv::internal {

void check_halo_grid(const HaloLayout& layout, const ProcessGrid& grid) {
  require(layout.distribution().grid_shape() == grid.shape(),
          ErrorKind::kGridMismatch, "halo layout over grid ",
          layout.distribution().grid_shape(), " used with a process grid ",
          grid.shape());
}

void check_halo_start(bool in_flight, const HaloLayout& tensor_layout,
                      int tensor_part, const HaloLayout& layout, int part) {
  require(!in_flight, ErrorKind::kState,
          "start() called while an exchange is in flight; call wait() first");
  require(tensor_layout == layout && tensor_part == part,
          ErrorKind::kShapeMismatch, "tensor of global shape ",
          tensor_layout.distribution().global_shape(),
          " does not have the layout this halo exchange was planned for");
}

void check_halo_wait(bool in_flight) {
  require(in_flight, ErrorKind::kState,
          "wait() called with no exchange in flight");
}

}  // namespace distconv::internal
