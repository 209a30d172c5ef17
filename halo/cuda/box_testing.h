// Test helpers of the pack kernels' tests: random boxes, and the boxes of
// real halo plans.
#ifndef DISTCONV_HALO_CUDA_BOX_TESTING_H_
#define DISTCONV_HALO_CUDA_BOX_TESTING_H_

#include <random>
#include <string>
#include <vector>

#include "distconv/box.h"
#include "distconv/halo_layout.h"
#include "halo/halo_plan.h"
#include "tests/layout_cases.h"

namespace distconv::testing {

// An extent of `ndims` dimensions of 1 to max_extent cells each.
inline Shape random_extent(std::mt19937_64& rng, int ndims, Index max_extent) {
  Shape extent = Shape::filled(ndims, 1);
  for (int d = 0; d < ndims; ++d) {
    extent[d] = 1 + static_cast<Index>(rng() % max_extent);
  }
  return extent;
}

// `count` boxes inside `extent`, some empty, some overlapping.
inline std::vector<Box> random_boxes(std::mt19937_64& rng, const Shape& extent,
                                     int count) {
  const int n = extent.ndims();
  std::vector<Box> boxes;
  for (int b = 0; b < count; ++b) {
    Box box{Shape::filled(n, 0), Shape::filled(n, 0)};
    for (int d = 0; d < n; ++d) {
      box.lower[d] = static_cast<Index>(rng() % extent[d]);
      box.extent[d] =
          static_cast<Index>(rng() % (extent[d] - box.lower[d] + 1));
    }
    boxes.push_back(box);
  }
  return boxes;
}

// Calls fn(name, storage_shape, boxes) with the send boxes and with the
// receive boxes (in storage order) of parts [0, parts) (all parts when
// negative) of every layout case over each grid, in both storage orders.
template <typename Fn>
void for_each_halo_box_list(const std::vector<Shape>& grids, int parts,
                            Fn fn) {
  for (const Shape& grid : grids) {
    for (const LayoutCase& c : layout_cases(grid)) {
      for (StorageOrder order :
           {StorageOrder::kChannelsFirst, StorageOrder::kChannelsLast}) {
        const HaloLayout layout = c.layout.with_storage(order);
        const int n = parts < 0 ? layout.num_parts() : parts;
        for (int p = 0; p < n; ++p) {
          const HaloPlan plan = make_halo_plan(layout, p);
          for (const auto* list : {&plan.sends, &plan.recvs}) {
            fn(c.name + ", part " + std::to_string(p),
               layout.storage_shape(p), storage_boxes(layout, *list));
          }
        }
      }
    }
  }
}

}  // namespace distconv::testing

#endif  // DISTCONV_HALO_CUDA_BOX_TESTING_H_
