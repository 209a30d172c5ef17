#include "distconv/distribution.h"

#include <algorithm>
#include <sstream>

#include "distconv/error.h"

namespace distconv {

BlockPartition::BlockPartition(std::vector<Index> offsets)
    : offsets_(std::move(offsets)) {}

BlockPartition BlockPartition::balanced(Index n, int parts) {
  require(n >= 0, ErrorKind::kInvalidArgument, "extent must be >= 0, got ", n);
  require(parts >= 1, ErrorKind::kInvalidArgument,
          "number of parts must be >= 1, got ", parts);
  const Index q = n / parts, r = n % parts;
  std::vector<Index> offsets(parts + 1, 0);
  for (int i = 0; i < parts; ++i) offsets[i + 1] = offsets[i] + q + (i < r);
  return BlockPartition(std::move(offsets));
}

BlockPartition BlockPartition::from_sizes(const std::vector<Index>& sizes) {
  require(!sizes.empty(), ErrorKind::kInvalidArgument,
          "a partition needs at least one part");
  std::vector<Index> offsets(sizes.size() + 1, 0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    require(sizes[i] >= 0, ErrorKind::kInvalidArgument, "part ", i,
            " has negative size ", sizes[i]);
    offsets[i + 1] = offsets[i] + sizes[i];
  }
  return BlockPartition(std::move(offsets));
}

int BlockPartition::owner(Index i) const {
  require(i >= 0 && i < extent(), ErrorKind::kInvalidArgument, "index ", i,
          " outside [0, ", extent(), ")");
  // The last part whose begin is <= i; empty parts before it are skipped.
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), i);
  return static_cast<int>(it - offsets_.begin()) - 1;
}

namespace {
std::vector<BlockPartition> balanced_partitions(const Shape& global,
                                                const Shape& grid) {
  require(global.ndims() == grid.ndims(), ErrorKind::kShapeMismatch,
          "tensor shape ", global, " and grid shape ", grid,
          " have different numbers of dimensions");
  std::vector<BlockPartition> parts;
  for (int d = 0; d < global.ndims(); ++d) {
    require(grid[d] >= 1, ErrorKind::kInvalidArgument, "grid shape ", grid,
            " must be >= 1 in every dimension");
    parts.push_back(
        BlockPartition::balanced(global[d], static_cast<int>(grid[d])));
  }
  return parts;
}
}  // namespace

Distribution::Distribution(const Shape& global, const Shape& grid)
    : Distribution(balanced_partitions(global, grid)) {}

Distribution::Distribution(std::vector<BlockPartition> partitions)
    : partitions_(std::move(partitions)) {
  const int n = static_cast<int>(partitions_.size());
  require(n >= 1 && n <= kMaxDims, ErrorKind::kInvalidArgument,
          "a distribution has 1 to ", kMaxDims, " dimensions, got ", n);
  global_ = Shape::filled(n, 0);
  grid_ = Shape::filled(n, 0);
  for (int d = 0; d < n; ++d) {
    global_[d] = partitions_[d].extent();
    grid_[d] = partitions_[d].parts();
  }
}

void Distribution::require_coord(const Shape& coord) const {
  require(within(coord, grid_), ErrorKind::kInvalidArgument, "grid coordinate ",
          coord, " outside grid ", grid_);
}

int Distribution::part_index(const Shape& coord) const {
  require_coord(coord);
  return static_cast<int>(linear_index(coord, grid_));
}

Shape Distribution::part_coord(int part) const {
  require(part >= 0 && part < num_parts(), ErrorKind::kInvalidArgument, "part ",
          part, " outside [0, ", num_parts(), ")");
  return unravel(part, grid_);
}

std::vector<int> Distribution::parts_sharing(
    int part, const std::vector<int>& dims) const {
  const Shape mine = part_coord(part);
  std::vector<int> out;
  for (int q = 0; q < num_parts(); ++q) {
    const Shape other = part_coord(q);
    bool same = true;
    for (int d : dims) same = same && other[d] == mine[d];
    if (same) out.push_back(q);
  }
  return out;
}

std::string Distribution::describe() const {
  std::ostringstream out;
  out << "global " << global_shape() << " over grid " << grid_shape();
  for (int d = 0; d < ndims(); ++d) {
    const BlockPartition& p = partition(d);
    if (p == BlockPartition::balanced(p.extent(), p.parts())) continue;
    out << ", dimension " << d << " split at";
    for (int i = 0; i <= p.parts(); ++i) {
      out << (i ? "," : " ") << (i < p.parts() ? p.begin(i) : p.extent());
    }
  }
  return out.str();
}

Box Distribution::shard(const Shape& coord) const {
  require_coord(coord);
  Box b{Shape::filled(ndims(), 0), Shape::filled(ndims(), 0)};
  for (int d = 0; d < ndims(); ++d) {
    const int p = static_cast<int>(coord[d]);
    b.lower[d] = partitions_[d].begin(p);
    b.extent[d] = partitions_[d].size(p);
  }
  return b;
}

Shape Distribution::owner(const Shape& point) const {
  require(point.ndims() == ndims(), ErrorKind::kShapeMismatch, "index ", point,
          " does not match tensor shape ", global_);
  Shape c = Shape::filled(ndims(), 0);
  for (int d = 0; d < ndims(); ++d) c[d] = partitions_[d].owner(point[d]);
  return c;
}

std::optional<Shape> Distribution::neighbor(const Shape& coord, int dim,
                                            Side side,
                                            Boundary boundary) const {
  require_coord(coord);
  require(dim >= 0 && dim < ndims(), ErrorKind::kInvalidArgument, "dimension ",
          dim, " outside [0, ", ndims(), ")");
  Shape n = coord;
  n[dim] += side == Side::kLower ? -1 : 1;
  if (n[dim] < 0 || n[dim] >= grid_[dim]) {
    if (boundary == Boundary::kOpen) return std::nullopt;
    n[dim] = (n[dim] + grid_[dim]) % grid_[dim];
  }
  return n;
}

}  // namespace distconv
