#include "distconv/shard_distribution.h"

#include <mpi.h>

#include <vector>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv {
namespace {

// Per rank: the shard's number of dimensions, then up to kMaxDims extents,
// then the tags.
constexpr int kShapeSlots = kMaxDims + 1;
constexpr int kSlots = kShapeSlots + kShardTags;

}  // namespace

long long GatheredShards::tag(int rank, int i) const {
  return values[static_cast<size_t>(rank) * kSlots + kShapeSlots + i];
}

GatheredShards gather_shards(const ProcessGrid& grid, const Shape& local_shape,
                             const std::array<long long, kShardTags>& tags) {
  std::vector<long long> mine(kSlots, -1);
  mine[0] = local_shape.ndims();
  for (int d = 0; d < local_shape.ndims() && d < kMaxDims; ++d) {
    mine[d + 1] = local_shape[d];
  }
  for (int i = 0; i < kShardTags; ++i) mine[kShapeSlots + i] = tags[i];
  GatheredShards g;
  g.values.resize(static_cast<size_t>(grid.size()) * kSlots);
  internal::check_mpi(
      MPI_Allgather(mine.data(), kSlots, MPI_LONG_LONG, g.values.data(), kSlots,
                    MPI_LONG_LONG, grid.comm()),
      "MPI_Allgather");
  return g;
}

Distribution distribution_of_shards(const ProcessGrid& grid,
                                    const Shape& local_shape) {
  return distribution_of(grid, gather_shards(grid, local_shape, {}));
}

Distribution distribution_of(const ProcessGrid& grid,
                             const GatheredShards& gathered) {
  const int size = grid.size();
  const int ndims = grid.ndims();
  const std::vector<long long>& all = gathered.values;
  require(all.size() == static_cast<size_t>(size) * kSlots,
          ErrorKind::kInvalidArgument, "shards gathered over ",
          all.size() / kSlots, " ranks, the grid has ", size);
  auto extent = [&](int rank, int d) {
    return all[static_cast<size_t>(rank) * kSlots + d + 1];
  };
  for (int r = 0; r < size; ++r) {
    const long long n = all[static_cast<size_t>(r) * kSlots];
    require(n == ndims, ErrorKind::kShapeMismatch, "rank ", r, " holds a ", n,
            "-dimensional shard, the grid ", grid.shape(), " has ", ndims,
            " dimensions");
    for (int d = 0; d < ndims; ++d) {
      require(extent(r, d) >= 0, ErrorKind::kShapeMismatch, "rank ", r,
              " holds a shard of negative extent ", extent(r, d),
              " in dimension ", d);
    }
  }
  std::vector<BlockPartition> partitions;
  for (int d = 0; d < ndims; ++d) {
    std::vector<Index> sizes(grid.shape()[d], -1);
    std::vector<int> first(grid.shape()[d], -1);
    for (int r = 0; r < size; ++r) {
      const Index c = grid.coord_of(r)[d];
      if (first[c] < 0) {
        first[c] = r;
        sizes[c] = extent(r, d);
      }
      require(extent(r, d) == sizes[c], ErrorKind::kShapeMismatch,
              "shards do not tile a tensor over grid ", grid.shape(),
              ": ranks ", first[c], " and ", r, " sit at coordinate ", c,
              " of grid dimension ", d, " but hold ", sizes[c], " and ",
              extent(r, d), " elements of tensor dimension ", d);
    }
    partitions.push_back(BlockPartition::from_sizes(sizes));
  }
  return Distribution(std::move(partitions));
}

}  // namespace distconv
