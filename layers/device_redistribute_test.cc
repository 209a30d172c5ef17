// Redistribution in GPU memory (Redistribution<T, DeviceSpace>) against
// the host layer, on the same tensors: between every pair of grids of the
// rank count, 4D and 5D, with even shards and with uneven ones (a part
// empty wherever a dimension is split), with or without halos and in
// either storage order on each side, forward and backward (twice with one
// plan) leave the same buffers bit for bit (halo cells untouched), on a
// stream of the test's own. A tensor of
// another layout fails on every rank. Every case skips, saying so, where
// there is no GPU.
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/device_layer_testing.h"
#include "layers/redistribute.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::world_size;

class DeviceRedistribution : public testing::DeviceLayerTest {};

// `global` over `grid`. Variant 0: balanced, no halos, channels-first;
// variant 1: the first part of every split dimension empty and the rest
// balanced, spatial halos 1 below and 2 above, channels-last.
HaloLayout layout_over(const Shape& global, const Shape& grid, int variant) {
  std::vector<BlockPartition> parts;
  for (int d = 0; d < global.ndims(); ++d) {
    const int n = static_cast<int>(grid[d]);
    if (variant == 0 || n == 1) {
      parts.push_back(BlockPartition::balanced(global[d], n));
      continue;
    }
    std::vector<Index> sizes(n, 0);
    for (Index i = 0; i < global[d]; ++i) ++sizes[1 + i % (n - 1)];
    parts.push_back(BlockPartition::from_sizes(sizes));
  }
  const Distribution dist(parts);
  if (variant == 0) return HaloLayout(dist);
  HaloWidths w = HaloWidths::none(global.ndims());
  for (int d = 2; d < global.ndims(); ++d) {
    w.lower[d] = 1;
    w.upper[d] = 2;
  }
  return HaloLayout(dist, w).with_storage(StorageOrder::kChannelsLast);
}

// Random interior values (seeded by the rank), halo cells 7.
template <typename T>
void fill(DistTensor<T>& t, unsigned seed) {
  t.buffer().for_each([](const Shape&, T& v) { v = T(7); });
  std::mt19937_64 rng(seed * 131 + testing::world_rank());
  std::uniform_real_distribution<double> u(-1, 1);
  t.interior().for_each([&](const Shape&, T& v) { v = T(u(rng)); });
}

// Forward and backward twice with one plan (the second on other values).
template <typename T>
void expect_same_moves(const Shape& global, const Shape& from_grid,
                       const Shape& to_grid, int from_variant, int to_variant,
                       const testing::DeviceStream& stream) {
  const ProcessGrid gf(MPI_COMM_WORLD, from_grid), gt(MPI_COMM_WORLD, to_grid);
  const HaloLayout from = layout_over(global, from_grid, from_variant);
  const HaloLayout to = layout_over(global, to_grid, to_variant);
  Redistribution<T> host(gf, from, gt, to);
  Redistribution<T, DeviceSpace> dev(gf, from, gt, to,
                                     Exec<DeviceSpace>(stream.get()));
  SCOPED_TRACE(::testing::Message()
               << "global " << global << " from " << from_grid << " ("
               << from_variant << ") to " << to_grid << " (" << to_variant
               << ")");
  for (unsigned round : {0u, 1u}) {
    DistTensor<T> x(gf, from), y(gt, to), dx(gf, from);
    fill(x, 1 + 3 * round);
    fill(y, 2 + 3 * round);
    fill(dx, 3 + 3 * round);
    DistTensor<T, DeviceSpace> xd = testing::to_device(gf, x);
    DistTensor<T, DeviceSpace> yd = testing::to_device(gt, y);
    DistTensor<T, DeviceSpace> dxd = testing::to_device(gf, dx);
    host.forward(x, y);
    dev.forward(xd, yd);
    host.backward(y, dx);
    dev.backward(yd, dxd);
    stream.synchronize();
    testing::expect_same_buffer(y, yd, "forward");
    testing::expect_same_buffer(dx, dxd, "backward");
  }
}

TEST_F(DeviceRedistribution, MatchesTheHostBetweenEveryPairOf4dGrids) {
  const testing::DeviceStream stream;
  const std::vector<Shape> grids = testing::factorizations(world_size(), 4);
  for (const Shape& from : grids) {
    for (const Shape& to : grids) {
      for (int variants : {0, 1, 2, 3}) {
        expect_same_moves<double>(Shape{3, 4, 7, 5}, from, to, variants / 2,
                                  variants % 2, stream);
      }
    }
  }
}

TEST_F(DeviceRedistribution, MatchesTheHostIn5dAndInFloat) {
  const testing::DeviceStream stream;
  const std::vector<Shape> grids = testing::factorizations(world_size(), 5);
  for (size_t i = 0; i < grids.size(); ++i) {
    const Shape& to = grids[(i * 7 + 3) % grids.size()];
    expect_same_moves<float>(Shape{2, 3, 5, 4, 6}, grids[i], to, int(i % 2),
                             int(i / 2 % 2), stream);
  }
}

TEST_F(DeviceRedistribution, MatchesTheHostInBf16) {
  const testing::DeviceStream stream;
  const std::vector<Shape> grids = testing::factorizations(world_size(), 4);
  for (size_t i = 0; i < grids.size(); ++i) {
    const Shape& to = grids[(i * 5 + 1) % grids.size()];
    expect_same_moves<bf16>(Shape{3, 4, 7, 5}, grids[i], to, int(i % 2),
                            int(i / 2 % 2), stream);
    expect_same_moves<fp16>(Shape{3, 4, 7, 5}, grids[i], to, int(i % 2),
                            int(i / 2 % 2), stream);
  }
}

TEST_F(DeviceRedistribution, ATensorOfAnotherLayoutFailsOnEveryRank) {
  const Shape grid = testing::factorizations(world_size(), 4).back();
  const ProcessGrid g(MPI_COMM_WORLD, grid);
  const Shape global{2, 2, 6, 6};
  const HaloLayout a = layout_over(global, grid, 0);
  const HaloLayout b = layout_over(global, grid, 1);
  Redistribution<float, DeviceSpace> r(g, a, g, b);
  DistTensor<float, DeviceSpace> x(g, a), wrong(g, a);
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch, "dst tensor's layout",
      [&] { r.forward(x, wrong); });
}

}  // namespace
}  // namespace distconv
