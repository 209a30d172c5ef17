// distribution_of_shards: the Distribution that the ranks' shards form,
// worked out from the shard each rank holds. What a framework needs when
// its tensors arrive as plain local blocks (a PyTorch tensor per rank)
// rather than with a Distribution: every rank passes the extents of its
// own block and gets the same Distribution back, uneven and empty parts
// included.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 3, 1});
//   // ranks hold 4, 3 and 3 of 10 rows
//   Distribution d = distribution_of_shards(grid, Shape{2, 16, rows, 64});
//   d.global_shape();       // {2, 16, 10, 64}
//   d.partition(2);         // split at 0, 4, 7, 10
//
// Collective over the grid (one allgather). The blocks must tile a tensor
// along the grid: every rank at the same coordinate of grid dimension d
// holds the same extent in tensor dimension d. Otherwise, and for a shape
// whose rank differs from the grid's or between ranks, every rank throws
// the same kShapeMismatch naming the ranks and extents.
#ifndef DISTCONV_SHARD_DISTRIBUTION_H_
#define DISTCONV_SHARD_DISTRIBUTION_H_

#include <array>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/process_grid.h"
#include "distconv/shape.h"

namespace distconv {

Distribution distribution_of_shards(const ProcessGrid& grid,
                                    const Shape& local_shape);

// The same in two steps, with a few numbers of each rank's own (tags)
// travelling in the one allgather: a caller agreeing on more per-rank
// facts than the shards (a front end's error flag and element type, say)
// reads every rank's tags before the shards are checked.
//
//   GatheredShards g = gather_shards(grid, local_shape, {flag, dtype});
//   g.tag(r, 0);                      // rank r's flag, on every rank
//   Distribution d = distribution_of(grid, g);   // no communication
inline constexpr int kShardTags = 2;

struct GatheredShards {
  std::vector<long long> values;  // per rank: ndims, extents, tags
  long long tag(int rank, int i) const;
};

// Collective over the grid (one allgather).
GatheredShards gather_shards(const ProcessGrid& grid, const Shape& local_shape,
                             const std::array<long long, kShardTags>& tags);
// Local: throws what distribution_of_shards throws, alike on every rank
// (every rank holds the same values).
Distribution distribution_of(const ProcessGrid& grid,
                             const GatheredShards& gathered);

}  // namespace distconv

#endif  // DISTCONV_SHARD_DISTRIBUTION_H_
