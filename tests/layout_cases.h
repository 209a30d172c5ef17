// Test helpers: tables of grids and halo layouts for the distribution and
// halo tests, and a cell-by-cell oracle for where a halo cell's value lives.
// Pure (no MPI), so the same cases drive the plan's property tests and the
// MPI exchange tests.
#ifndef DISTCONV_TESTS_LAYOUT_CASES_H_
#define DISTCONV_TESTS_LAYOUT_CASES_H_

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "distconv/halo_layout.h"

namespace distconv::testing {

// Every ordered factorisation of n into ndims factors (e.g. n=4, ndims=2:
// 1x4, 2x2, 4x1).
std::vector<Shape> factorizations(int n, int ndims);

struct LayoutCase {
  std::string name;
  HaloLayout layout;
};

// Layouts over `grid`: even and uneven shards, empty shards, halos wider than
// the neighbour's shard, asymmetric and per-part widths, periodic and open
// boundaries, no halo at all.
std::vector<LayoutCase> layout_cases(const Shape& grid);

// A random layout: 4D or 5D, up to `max_parts` parts, N and C extents 0..3,
// spatial extents 0..9 (some explicit uneven partitions with empty parts),
// random per-part widths 0..4 and random boundaries.
HaloLayout random_layout(std::mt19937_64& rng, int max_parts);

// The global index whose value a buffer cell at global position `point`
// holds after a forward exchange: `point` itself inside the tensor, wrapped
// across periodic boundaries, nothing past an open boundary.
std::optional<Shape> source_of(const HaloLayout& layout, const Shape& point);

// A distinct value per global index, exact in float (for small tensors).
double global_value(const Shape& index, const Shape& global_shape);

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_LAYOUT_CASES_H_
