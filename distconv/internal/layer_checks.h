// Internal: the plan-time and call-time checks every distributed layer
// makes, with one wording. Pure (global information only), so a plan's
// checks throw the same distconv::Error on every rank.
//
//   check_grid(src, grid.shape(), "input");
//   check_unsplit_channels(src.grid_shape(), "the convolution");
//   check_plan_layout(x.layout(), plan_src_layout, "src", "convolution");
#ifndef DISTCONV_INTERNAL_LAYER_CHECKS_H_
#define DISTCONV_INTERNAL_LAYER_CHECKS_H_

#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/shape.h"

namespace distconv::internal {

// kGridMismatch unless `dist` (the layer's `what` distribution: "input",
// "prediction") lies over a grid of `grid_shape`.
void check_grid(const Distribution& dist, const Shape& grid_shape,
                const char* what);
// kUnsupported, naming `layer` ("the convolution"), if `grid_shape` splits
// channels.
void check_unsplit_channels(const Shape& grid_shape, const char* layer);
// kInvalidArgument unless `rank` is a part of `dist`'s grid (a plan is
// made for one part).
void check_plan_rank(const Distribution& dist, int rank);
// For a layer that maps a tensor's spatial extents to `size` (adaptive
// pooling, interpolation; `what` names it): kInvalidArgument unless `size`
// has 1 to 3 extents, kShapeMismatch unless `src_shape` is (N, C, one
// spatial extent per entry of `size`), kInvalidArgument unless N, C >= 0
// and every spatial extent on both sides >= 1.
void check_resize(const char* what, const Shape& src_shape, const Shape& size);
// kShapeMismatch unless a tensor's layout `have` is the plan's `want` for
// its `what` tensor ("src", "diff_dst") of `layer` ("convolution").
void check_plan_layout(const HaloLayout& have, const HaloLayout& want,
                       const char* what, const char* layer);

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_LAYER_CHECKS_H_
