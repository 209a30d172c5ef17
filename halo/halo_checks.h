// Internal: the checks the halo exchange makes of its calls, in every
// memory space. Local (no communication): start() and wait() misuse is the
// caller's on each rank.
#ifndef DISTCONV_HALO_HALO_CHECKS_H_
#define DISTCONV_HALO_HALO_CHECKS_H_

#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"

namespace distconv::internal {

// kGridMismatch unless `layout` is distributed over `grid`'s shape.
void check_halo_grid(const HaloLayout& layout, const ProcessGrid& grid);
// For start(): kState if an exchange is in flight; kShapeMismatch unless
// the tensor's layout and part are the exchange's.
void check_halo_start(bool in_flight, const HaloLayout& tensor_layout,
                      int tensor_part, const HaloLayout& layout, int part);
// For wait(): kState unless an exchange is in flight.
void check_halo_wait(bool in_flight);

}  // namespace distconv::internal

#endif  // DISTCONV_HALO_HALO_CHECKS_H_
