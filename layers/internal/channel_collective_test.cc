// The channel collectives on every channel group of grids that split
// channels (alone and with samples), balanced, uneven and empty blocks:
// their results cell by cell, their adjoint identity, and the count limit.
#include "layers/internal/channel_collective.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "distconv/process_grid.h"
#include "tests/mpi_testing.h"

namespace distconv::internal {
namespace {

using testing::world_size;

struct Case {
  std::string name;
  Shape grid;       // (N, C, H, W)
  Index channels;
  std::vector<Index> sizes;  // empty: balanced over grid[1]
};

std::vector<Case> cases() {
  const int n = world_size();
  std::vector<Case> out = {
      {"balanced", Shape{1, n, 1, 1}, 5, {}},
      {"more_parts_than_channels", Shape{1, n, 1, 1}, 2, {}},
  };
  std::vector<Index> uneven(n, 0);
  uneven[0] = 3;  // the last part takes the rest; empty parts between
  uneven[n - 1] += 4;
  out.push_back({"uneven_with_empty_blocks", Shape{1, n, 1, 1}, 7, uneven});
  if (n % 2 == 0) {
    out.push_back({"samples_and_channels", Shape{2, n / 2, 1, 1}, 6, {}});
  }
  return out;
}

BlockPartition partition(const Case& c, int parts) {
  return c.sizes.empty() ? BlockPartition::balanced(c.channels, parts)
                         : BlockPartition::from_sizes(c.sizes);
}

// A value per (position, channel, contributing member), exact in T, as are
// the sums of up to 8 of them (bf16 holds integers up to 256 exactly,
// fp16 up to 2048).
template <typename T>
double value(Index p, Index c, int member) {
  const Index range = std::is_same_v<T, bf16> ? 31 : 97;
  return static_cast<double>((p * 31 + c * 7 + member * 3) % range) -
         (range - 1) / 2;
}

template <typename T>
void ExpectGathersAndSums(const Case& c, Index positions) {
  ProcessGrid grid(MPI_COMM_WORLD, c.grid);
  const int parts = static_cast<int>(c.grid[1]);
  const BlockPartition channels = partition(c, parts);
  const int me = static_cast<int>(grid.coord()[1]);
  ChannelCollective<T> coll(grid.along(1), channels, positions);
  const Index cm = channels.size(me), c0 = channels.begin(me);
  ASSERT_EQ(coll.block_size(), positions * cm);
  ASSERT_EQ(coll.full_size(), positions * c.channels);

  std::vector<T> block(positions * cm), full(coll.full_size(), T(-1));
  for (Index p = 0; p < positions; ++p) {
    for (Index k = 0; k < cm; ++k) block[p * cm + k] = value<T>(p, c0 + k, 0);
  }
  coll.allgather(block.data(), full.data());
  for (Index p = 0; p < positions; ++p) {
    for (Index k = 0; k < c.channels; ++k) {
      ASSERT_EQ(full[p * c.channels + k], T(value<T>(p, k, 0)))
          << "allgather at position " << p << ", channel " << k;
    }
  }

  for (Index p = 0; p < positions; ++p) {
    for (Index k = 0; k < c.channels; ++k) {
      full[p * c.channels + k] = value<T>(p, k, me);
    }
  }
  std::fill(block.begin(), block.end(), T(-1));
  coll.reduce_scatter(full.data(), block.data());
  for (Index p = 0; p < positions; ++p) {
    for (Index k = 0; k < cm; ++k) {
      double want = 0;
      for (int m = 0; m < parts; ++m) want += value<T>(p, c0 + k, m);
      ASSERT_EQ(block[p * cm + k], T(want))
          << "reduce_scatter at position " << p << ", channel " << c0 + k;
    }
  }
}

TEST(ChannelCollective, GathersAndSumsEveryBlock) {
  for (const Case& c : cases()) {
    for (Index positions : {Index{6}, Index{0}}) {
      SCOPED_TRACE(c.name + " on grid " + c.grid.to_string() + ", " +
                   std::to_string(positions) + " positions");
      ExpectGathersAndSums<float>(c, positions);
      ExpectGathersAndSums<double>(c, positions);
      ExpectGathersAndSums<bf16>(c, positions);
      ExpectGathersAndSums<fp16>(c, positions);
    }
  }
}

// sum_m <allgather(x)_m, y_m> == sum_m <x_m, reduce_scatter(y)_m>.
TEST(ChannelCollective, ReduceScatterIsTheAdjointOfAllgather) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + " on grid " + c.grid.to_string());
    ProcessGrid grid(MPI_COMM_WORLD, c.grid);
    const BlockPartition channels = partition(c, static_cast<int>(c.grid[1]));
    ChannelCollective<double> coll(grid.along(1), channels, 9);
    std::mt19937_64 rng(11 + grid.rank());
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> x(coll.block_size()), y(coll.full_size());
    for (double& v : x) v = u(rng);
    for (double& v : y) v = u(rng);
    std::vector<double> ax(coll.full_size()), aty(coll.block_size());
    coll.allgather(x.data(), ax.data());
    coll.reduce_scatter(y.data(), aty.data());
    double ax_y = 0, x_aty = 0;
    for (size_t i = 0; i < y.size(); ++i) ax_y += ax[i] * y[i];
    for (size_t i = 0; i < x.size(); ++i) x_aty += x[i] * aty[i];
    // Sum over the channel group only (the other groups are other
    // problems): along(1)'s sum.
    double sums[2] = {ax_y, x_aty};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, grid.along(1));
    EXPECT_NEAR(sums[0], sums[1], 1e-12 * std::max(1.0, std::abs(sums[0])));
  }
}

TEST(ChannelCollective, RefusesCountsPastInt) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, world_size(), 1, 1});
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kUnsupported, "exceeds MPI's int counts", [&] {
        ChannelCollective<float>(
            grid.along(1), BlockPartition::balanced(2 * world_size(), world_size()),
            Index{INT_MAX});
      });
}

}  // namespace
}  // namespace distconv::internal
