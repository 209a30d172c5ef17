#include "tests/layout_cases.h"

#include <algorithm>

namespace distconv::testing {
namespace {

void factor(int n, int d, Shape& current, std::vector<Shape>& out) {
  if (d == current.ndims() - 1) {
    current[d] = n;
    out.push_back(current);
    return;
  }
  for (int f = 1; f <= n; ++f) {
    if (n % f) continue;
    current[d] = f;
    factor(n / f, d + 1, current, out);
  }
}

// Widths on the spatial dimensions only, each clamped to the extent.
HaloWidths spatial_widths(const Shape& global, Index lower, Index upper) {
  HaloWidths w = HaloWidths::none(global.ndims());
  for (int d = 2; d < global.ndims(); ++d) {
    w.lower[d] = std::min(lower, global[d]);
    w.upper[d] = std::min(upper, global[d]);
  }
  return w;
}

std::vector<Boundary> periodic_spatial(int ndims) {
  std::vector<Boundary> b(ndims, Boundary::kPeriodic);
  b[0] = b[1] = Boundary::kOpen;
  return b;
}

Shape scaled(const Shape& grid, Index factor, Index extra) {
  Shape s = grid;
  for (int d = 0; d < grid.ndims(); ++d) s[d] = grid[d] * factor + extra;
  return s;
}

}  // namespace

std::vector<Shape> factorizations(int n, int ndims) {
  std::vector<Shape> out;
  Shape current = Shape::filled(ndims, 1);
  factor(n, 0, current, out);
  return out;
}

std::vector<LayoutCase> layout_cases(const Shape& grid) {
  const int n = grid.ndims();
  std::vector<LayoutCase> cases;
  auto add = [&](std::string name, const Shape& global, auto&&... rest) {
    cases.push_back({std::move(name), HaloLayout(Distribution(global, grid),
                                                 rest...)});
  };
  const Shape even = scaled(grid, 3, 0);
  add("even_w1", even, spatial_widths(even, 1, 1));
  const Shape uneven = scaled(grid, 3, 1);
  add("uneven_w2_1", uneven, spatial_widths(uneven, 2, 1));
  Shape with_empty = grid;  // one element per part, and one part short
  for (int d = 2; d < n; ++d) with_empty[d] = std::max<Index>(grid[d] - 1, 1);
  add("empty_parts", with_empty, spatial_widths(with_empty, 1, 1));
  const Shape small = scaled(grid, 2, 0);
  add("multihop_w3", small, spatial_widths(small, 3, 3));
  const Shape odd = scaled(grid, 2, 1);
  add("periodic_w1_2", odd, spatial_widths(odd, 1, 2), periodic_spatial(n));
  add("no_halo", uneven, HaloWidths::none(n));
  // Per-part widths (what a strided convolution produces), periodic in the
  // last dimension only.
  const Distribution dist(uneven, grid);
  std::vector<HaloWidths> per_part;
  for (int p = 0; p < dist.num_parts(); ++p) {
    per_part.push_back(spatial_widths(uneven, p % 3, (p + 1) % 2 + (p % 5 == 4)));
  }
  std::vector<Boundary> last_periodic(n, Boundary::kOpen);
  last_periodic[n - 1] = Boundary::kPeriodic;
  cases.push_back({"per_part_widths",
                   HaloLayout(dist, per_part, last_periodic)});
  // Channels-last buffers (what the oneDNN convolution uses).
  cases.push_back({"uneven_w2_1_channels_last",
                   HaloLayout(Distribution(uneven, grid),
                              spatial_widths(uneven, 2, 1))
                       .with_storage(StorageOrder::kChannelsLast)});
  cases.push_back({"per_part_widths_channels_last",
                   HaloLayout(dist, per_part, last_periodic)
                       .with_storage(StorageOrder::kChannelsLast)});
  return cases;
}

HaloLayout random_layout(std::mt19937_64& rng, int max_parts) {
  auto uniform = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  const int n = uniform(0, 1) ? 5 : 4;
  std::vector<BlockPartition> parts;
  Index total = 1;
  for (int d = 0; d < n; ++d) {
    int np = static_cast<int>(uniform(1, 4));
    if (total * np > max_parts) np = 1;
    total *= np;
    if (uniform(0, 3) == 0) {
      std::vector<Index> sizes;
      for (int i = 0; i < np; ++i) sizes.push_back(uniform(0, 3));
      parts.push_back(BlockPartition::from_sizes(sizes));
    } else {
      parts.push_back(BlockPartition::balanced(uniform(0, d < 2 ? 3 : 9), np));
    }
  }
  const Distribution dist(parts);
  const Shape& global = dist.global_shape();
  std::vector<HaloWidths> widths;
  for (int p = 0; p < dist.num_parts(); ++p) {
    HaloWidths w = HaloWidths::none(n);
    for (int d = 2; d < n; ++d) {
      w.lower[d] = uniform(0, std::min<Index>(global[d], 4));
      w.upper[d] = uniform(0, std::min<Index>(global[d], 4));
    }
    widths.push_back(w);
  }
  std::vector<Boundary> boundaries(n, Boundary::kOpen);
  for (int d = 2; d < n; ++d) {
    if (uniform(0, 1)) boundaries[d] = Boundary::kPeriodic;
  }
  return HaloLayout(dist, widths, boundaries);
}

std::optional<Shape> source_of(const HaloLayout& layout, const Shape& point) {
  const Shape& global = layout.distribution().global_shape();
  Shape s = point;
  for (int d = 0; d < s.ndims(); ++d) {
    if (s[d] >= 0 && s[d] < global[d]) continue;
    if (layout.boundary(d) == Boundary::kOpen) return std::nullopt;
    s[d] = ((s[d] % global[d]) + global[d]) % global[d];
  }
  return s;
}

double global_value(const Shape& index, const Shape& global_shape) {
  return 1.0 + static_cast<double>(linear_index(index, global_shape));
}

}  // namespace distconv::testing
