// Block distributions of a tensor over a Cartesian grid of parts.
//
// BlockPartition splits one dimension of extent n into p contiguous parts;
// Distribution combines one partition per tensor dimension. Pure index math:
// no MPI. Part (grid coordinate) c owns the box `shard(c)`; grid coordinates
// map to a linear part index in row-major order (the last dimension fastest),
// which ProcessGrid uses as the rank in its communicator.
//
//   // N=8 over 2 parts, H=10 over 3 parts (4, 3, 3 rows), others whole.
//   Distribution dist(Shape{8, 16, 10, 10}, /*grid=*/Shape{2, 1, 3, 1});
//   dist.shard({1, 0, 2, 0});     // [4:8, 0:16, 7:10, 0:10)
//   dist.owner({5, 3, 4, 9});     // {1, 0, 1, 0}
#ifndef DISTCONV_DISTRIBUTION_H_
#define DISTCONV_DISTRIBUTION_H_

#include <optional>
#include <string>
#include <vector>

#include "distconv/box.h"
#include "distconv/shape.h"

namespace distconv {

class BlockPartition {
 public:
  // n elements in p nearly equal parts: the first n % p parts get one more.
  // Parts are empty when p > n.
  static BlockPartition balanced(Index n, int parts);
  // Explicit part sizes (each >= 0), in order.
  static BlockPartition from_sizes(const std::vector<Index>& sizes);

  Index extent() const { return offsets_.back(); }
  int parts() const { return static_cast<int>(offsets_.size()) - 1; }
  Index begin(int part) const { return offsets_[part]; }
  Index end(int part) const { return offsets_[part + 1]; }
  Index size(int part) const { return end(part) - begin(part); }
  // The part owning element i (0 <= i < extent()); never an empty part.
  int owner(Index i) const;

  friend bool operator==(const BlockPartition& a, const BlockPartition& b) {
    return a.offsets_ == b.offsets_;
  }

 private:
  explicit BlockPartition(std::vector<Index> offsets);
  std::vector<Index> offsets_;  // parts() + 1 entries, offsets_[0] == 0
};

enum class Side { kLower, kUpper };
// What lies past the global boundary: nothing (kOpen), or the other end of
// the same dimension (kPeriodic).
enum class Boundary { kOpen, kPeriodic };

class Distribution {
 public:
  // Balanced partitions of `global` over `grid` parts per dimension.
  Distribution(const Shape& global, const Shape& grid);
  // One partition per dimension (uneven sizes allowed).
  explicit Distribution(std::vector<BlockPartition> partitions);

  int ndims() const { return global_.ndims(); }
  const Shape& global_shape() const { return global_; }
  const Shape& grid_shape() const { return grid_; }
  int num_parts() const { return static_cast<int>(grid_.volume()); }
  const BlockPartition& partition(int dim) const { return partitions_[dim]; }

  // Grid coordinate <-> linear part index (row-major over the grid).
  int part_index(const Shape& coord) const;
  Shape part_coord(int part) const;

  Box shard(const Shape& coord) const;  // global coordinates
  Box shard(int part) const { return shard(part_coord(part)); }
  // "global 4x3x8x8 over grid 1x1x2x1", plus ", dimension d split at
  // 0,3,8" for each partition that is not the balanced one.
  std::string describe() const;
  // The parts whose grid coordinates equal `part`'s in dimensions `dims`
  // (the others vary), ascending, `part` among them: e.g. {0, 1}, the
  // parts holding the same samples and channels (a sample's spatial
  // parts).
  std::vector<int> parts_sharing(int part, const std::vector<int>& dims) const;
  // Grid coordinate of the part owning a global index inside the tensor.
  Shape owner(const Shape& point) const;
  // The adjacent grid coordinate along `dim`, or nothing past an open
  // boundary. With a periodic boundary the grid wraps around.
  std::optional<Shape> neighbor(const Shape& coord, int dim, Side side,
                                Boundary boundary) const;

  friend bool operator==(const Distribution& a, const Distribution& b) {
    return a.partitions_ == b.partitions_;
  }
  friend bool operator!=(const Distribution& a, const Distribution& b) {
    return !(a == b);
  }

 private:
  void require_coord(const Shape& coord) const;
  std::vector<BlockPartition> partitions_;
  Shape global_;
  Shape grid_;
};

}  // namespace distconv

#endif  // DISTCONV_DISTRIBUTION_H_
