// InterpolatePlan: what one rank of a distributed linear interpolation
// (layers/interpolate.h) does, as a value. plan_interpolate() derives it
// from the description, the input distribution and a rank, without MPI.
//
//   InterpolateDesc d = InterpolateDesc::of_size({64, 64});
//   Distribution src(Shape{1, 8, 16, 16}, Shape{1, 1, 2, 1});
//   InterpolatePlan plan = plan_interpolate(d, src, /*rank=*/1);
//   plan.src_layout;   // rank 1's input buffer: its rows 8..15 and row 7
//   plan.taps[0];      // its output rows' taps, in its buffer's rows
#ifndef DISTCONV_LAYERS_INTERPOLATE_PLAN_H_
#define DISTCONV_LAYERS_INTERPOLATE_PLAN_H_

#include <string>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/interpolate_desc.h"
#include "kernels/local_interpolate.h"

namespace distconv {

struct InterpolatePlan {
  InterpolateDesc desc;
  int rank = 0;
  // The input (and its gradient): halos covering this rank's taps; the
  // output (and its gradient): balanced spatially, no halos.
  HaloLayout src_layout, dst_layout;
  // Per spatial dimension, the taps of this rank's output shard in the
  // local coordinates of its input buffer.
  std::vector<LocalTaps> taps;

  // "linear interpolation 1x8x16x16 -> 1x8x64x64, align_corners no, halos
  // lower {0, 0, 1, 0} upper {0, 0, 0, 0}".
  std::string describe() const;
};

// The plan of part `rank` of `src`'s grid; validates from global
// information (desc.validate).
InterpolatePlan plan_interpolate(const InterpolateDesc& desc,
                                 const Distribution& src, int rank);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERPOLATE_PLAN_H_
