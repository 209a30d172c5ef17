// Redistribution between every pair of grids of the rank count (4D and 5D,
// channel splits included) with uneven and empty shards, per-rank halo
// widths on both sides and both storage orders: every element lands where
// the destination distribution puts it (checked cell by cell and against the
// gathered source), destination halos stay untouched, backward brings the
// source back, and backward is the adjoint of forward. Gathering onto and
// scattering from some of the ranks. Bad input fails on every rank.
#include "layers/redistribute.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/scatter_gather.h"
#include "tests/shard_testing.h"
#include "tests/layer_testing.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::factorizations;
using testing::fill_buffer;
using testing::gathered;
using testing::global_value;
using testing::halos_hold;
using testing::world_rank;
using testing::world_size;

Index uniform(std::mt19937_64& rng, Index lo, Index hi) {
  return std::uniform_int_distribution<Index>(lo, hi)(rng);
}

// `n` elements over `parts` parts at random, some parts empty.
BlockPartition uneven_partition(std::mt19937_64& rng, Index n, int parts) {
  std::vector<Index> sizes(parts, 0);
  for (Index i = 0; i < n; ++i) ++sizes[uniform(rng, 0, parts - 1)];
  if (parts > 1 && uniform(rng, 0, 1)) {  // one more empty part for sure
    const int p = static_cast<int>(uniform(rng, 0, parts - 1));
    sizes[(p + 1) % parts] += sizes[p];
    sizes[p] = 0;
  }
  return BlockPartition::from_sizes(sizes);
}

// A layout of `global` over `grid`, drawn from rng (seeded alike on every
// rank, so that all ranks draw the same one): balanced or uneven
// partitions, per-part halo widths 0..2 on each side of the spatial
// dimensions, either storage order.
HaloLayout drawn_layout(std::mt19937_64& rng, const Shape& global,
                        const Shape& grid) {
  const int n = global.ndims();
  std::vector<BlockPartition> partitions;
  for (int d = 0; d < n; ++d) {
    const int parts = static_cast<int>(grid[d]);
    partitions.push_back(uniform(rng, 0, 2) == 0
                             ? uneven_partition(rng, global[d], parts)
                             : BlockPartition::balanced(global[d], parts));
  }
  const Distribution dist(partitions);
  std::vector<HaloWidths> widths;
  for (int p = 0; p < dist.num_parts(); ++p) {
    HaloWidths w = HaloWidths::none(n);
    for (int d = 2; d < n; ++d) {
      w.lower[d] = uniform(rng, 0, std::min<Index>(2, global[d]));
      w.upper[d] = uniform(rng, 0, std::min<Index>(2, global[d]));
    }
    widths.push_back(w);
  }
  return HaloLayout(dist, widths)
      .with_storage(uniform(rng, 0, 1) ? StorageOrder::kChannelsLast
                                       : StorageOrder::kChannelsFirst);
}

std::string summary(const HaloLayout& layout) {
  std::string s =
      "grid " + layout.distribution().grid_shape().to_string() + " sizes";
  for (int d = 0; d < layout.ndims(); ++d) {
    const BlockPartition& p = layout.distribution().partition(d);
    s += d ? " | " : " ";
    for (int i = 0; i < p.parts(); ++i) {
      s += (i ? "," : "") + std::to_string(p.size(i));
    }
  }
  return s + (layout.storage_order() == StorageOrder::kChannelsLast
                  ? " channels-last"
                  : " channels-first");
}

// Each interior cell holds the distinct value of its global index.
template <typename T>
void fill_global_values(DistTensor<T>& t) {
  const Shape lower = t.shard().lower;
  t.interior().for_each([&](const Shape& i, T& v) {
    v = static_cast<T>(global_value(i + lower, t.global_shape()));
  });
}

// Interior cells on all ranks that do not hold their global value.
template <typename T>
long long wrong_cells(const DistTensor<T>& t) {
  const Shape lower = t.shard().lower;
  long long wrong = 0;
  t.interior().for_each([&](const Shape& i, const T& v) {
    if (v != static_cast<T>(global_value(i + lower, t.global_shape()))) {
      ++wrong;
    }
  });
  long long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG_LONG, MPI_SUM, t.grid().comm());
  return all;
}

template <typename T>
void fill_random(DistTensor<T>& t, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  t.buffer().for_each([&](const Shape&, T& v) { v = static_cast<T>(u(rng)); });
}

// Moves a tensor from `src` to `dst` with layouts drawn from rng and checks
// forward (cell by cell, against the gathered source, halos untouched),
// backward (the round trip) and, in double, the adjoint identity.
template <typename T>
void check_move(const ProcessGrid& src_grid, const ProcessGrid& dst_grid,
                const Shape& global, std::mt19937_64& rng) {
  const HaloLayout from = drawn_layout(rng, global, src_grid.shape());
  const HaloLayout to = drawn_layout(rng, global, dst_grid.shape());
  SCOPED_TRACE("from " + summary(from) + " to " + summary(to));
  Redistribution<T> shuffle(src_grid, from, dst_grid, to);

  DistTensor<T> x(src_grid, from), y(dst_grid, to);
  fill_buffer(x, T(-7));
  fill_global_values(x);
  fill_buffer(y, T(-5));
  shuffle.forward(x, y);
  EXPECT_EQ(wrong_cells(y), 0);
  EXPECT_TRUE(halos_hold(y, T(-5)));
  EXPECT_TRUE(halos_hold(x, T(-7)));
  const std::vector<T> want = gathered(x), got = gathered(y);
  if (world_rank() == 0) {
    EXPECT_EQ(got, want);
  }

  DistTensor<T> back(src_grid, from);
  fill_buffer(back, T(-3));
  shuffle.backward(y, back);
  EXPECT_EQ(wrong_cells(back), 0);
  EXPECT_TRUE(halos_hold(back, T(-3)));

  if constexpr (std::is_same_v<T, double>) {
    // <R x, z> == <x, R^T z>, halos of x and z holding noise.
    DistTensor<double> rx(dst_grid, to), z(dst_grid, to);
    DistTensor<double> rtz(src_grid, from);
    fill_random(x, 11 + world_rank());
    fill_random(z, 97 + world_rank());
    shuffle.forward(x, rx);
    shuffle.backward(z, rtz);
    const double lhs = testing::global_dot(rx, z);
    const double rhs = testing::global_dot(x, rtz);
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, std::abs(lhs)));
  }
}

std::vector<ProcessGrid> all_grids(int ndims) {
  std::vector<ProcessGrid> grids;
  for (const Shape& g : factorizations(world_size(), ndims)) {
    grids.emplace_back(MPI_COMM_WORLD, g);
  }
  return grids;
}

// 4D: every ordered pair of grids (channel splits included), each with its
// own layouts.
TEST(Redistribution, MovesBetweenEveryPairOf4dGrids) {
  const std::vector<ProcessGrid> grids = all_grids(4);
  const Shape global{3, 4, 5, 7};
  for (size_t i = 0; i < grids.size(); ++i) {
    for (size_t j = 0; j < grids.size(); ++j) {
      SCOPED_TRACE(grids[i].shape().to_string() + " -> " +
                   grids[j].shape().to_string());
      std::mt19937_64 rng(1000 * i + j);
      check_move<double>(grids[i], grids[j], global, rng);
    }
  }
}

// 5D: every grid to and from a D x H x W grid, and to the next grid.
TEST(Redistribution, MovesBetween5dGrids) {
  const std::vector<ProcessGrid> grids = all_grids(5);
  const Shape global{2, 3, 3, 4, 5};
  const Shape spatial = testing::spatial_grid(5);
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < grids.size(); ++i) {
    pairs.push_back({i, (i + 1) % grids.size()});
    if (grids[i].shape() != spatial) continue;
    for (size_t j = 0; j < grids.size(); ++j) {
      pairs.push_back({i, j});
      pairs.push_back({j, i});
    }
  }
  for (const auto& [i, j] : pairs) {
    SCOPED_TRACE(grids[i].shape().to_string() + " -> " +
                 grids[j].shape().to_string());
    std::mt19937_64 rng(1000 * i + j + 7);
    check_move<double>(grids[i], grids[j], global, rng);
  }
}

TEST(Redistribution, MovesFloatTensors) {
  for (int ndims : {4, 5}) {
    const std::vector<ProcessGrid> grids = all_grids(ndims);
    const Shape global = ndims == 4 ? Shape{5, 2, 6, 3} : Shape{3, 2, 4, 3, 5};
    for (size_t i = 0; i < grids.size(); ++i) {
      for (size_t j : {i, (i + 1) % grids.size(), grids.size() - 1 - i}) {
        SCOPED_TRACE(grids[i].shape().to_string() + " -> " +
                     grids[j].shape().to_string());
        std::mt19937_64 rng(31 * i + j);
        check_move<float>(grids[i], grids[j], global, rng);
      }
    }
  }
}

// bf16 and fp16 cells are copied bit for bit (the shapes hold fewer than
// 256 cells, so every global value is exact in both and distinct).
TEST(Redistribution, MovesBf16AndFp16Tensors) {
  for (int ndims : {4, 5}) {
    const std::vector<ProcessGrid> grids = all_grids(ndims);
    const Shape global = ndims == 4 ? Shape{5, 2, 6, 3} : Shape{2, 2, 4, 3, 5};
    for (size_t i = 0; i < grids.size(); ++i) {
      for (size_t j : {i, (i + 1) % grids.size(), grids.size() - 1 - i}) {
        SCOPED_TRACE(grids[i].shape().to_string() + " -> " +
                     grids[j].shape().to_string());
        std::mt19937_64 rng(17 * i + j);
        check_move<bf16>(grids[i], grids[j], global, rng);
        check_move<fp16>(grids[i], grids[j], global, rng);
      }
    }
  }
}

// Labels and masks: integer cells copied as they are (fewer than 256
// cells, so every global value fits a uint8 and is distinct).
TEST(Redistribution, MovesIntegerTensors) {
  for (int ndims : {4, 5}) {
    const std::vector<ProcessGrid> grids = all_grids(ndims);
    const Shape global = ndims == 4 ? Shape{5, 2, 6, 3} : Shape{2, 2, 4, 3, 5};
    for (size_t i = 0; i < grids.size(); ++i) {
      const size_t j = grids.size() - 1 - i;
      SCOPED_TRACE(grids[i].shape().to_string() + " -> " +
                   grids[j].shape().to_string());
      std::mt19937_64 rng(23 * i + j);
      check_move<std::int64_t>(grids[i], grids[j], global, rng);
      check_move<std::int32_t>(grids[i], grids[j], global, rng);
      check_move<std::uint8_t>(grids[i], grids[j], global, rng);
    }
  }
}

// The example: samples <-> rows <-> a 2-D spatial split, one
// layout with halos, with one message per peer that overlaps.
TEST(Redistribution, SamplesToSpaceAndBack) {
  const int n = world_size();
  ProcessGrid samples(MPI_COMM_WORLD, Shape{n, 1, 1, 1});
  ProcessGrid rows(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  ProcessGrid tiles(MPI_COMM_WORLD, testing::squarest_hw_grid());
  const Shape global{2 * n, 3, 4 * n, 6};
  const HaloLayout by_sample(Distribution(global, samples.shape()));
  const HaloLayout by_row =
      testing::with_halos(Distribution(global, rows.shape()), 1);
  const HaloLayout by_tile = testing::with_halos(
      Distribution(global, tiles.shape()), 2, StorageOrder::kChannelsFirst);
  Redistribution<float> a(samples, by_sample, rows, by_row);
  Redistribution<float> b(rows, by_row, tiles, by_tile);
  // Each rank sends every element it does not keep exactly once, to the one
  // rank that owns it next.
  EXPECT_EQ(a.plan().send_volume() + a.plan().kept.volume(),
            by_sample.shard(samples.rank()).volume());
  EXPECT_EQ(a.plan().recv_volume() + a.plan().kept.volume(),
            by_row.shard(rows.rank()).volume());
  EXPECT_EQ(static_cast<int>(a.plan().sends.size()), n - 1);

  DistTensor<float> x(samples, by_sample), y(rows, by_row), z(tiles, by_tile);
  fill_global_values(x);
  a.forward(x, y);
  b.forward(y, z);
  EXPECT_EQ(wrong_cells(z), 0);
  DistTensor<float> y2(rows, by_row), x2(samples, by_sample);
  b.backward(z, y2);
  a.backward(y2, x2);
  EXPECT_EQ(wrong_cells(y2), 0);
  EXPECT_EQ(wrong_cells(x2), 0);
}

// The whole tensor onto one rank (a distribution giving the others empty
// shards), and back out of it (backward: a scatter from that rank).
TEST(Redistribution, GathersOntoOneRankAndScattersBack) {
  const int n = world_size();
  const Shape global{2, 3, 5, 4};
  for (int root : {0, n - 1, n / 2}) {
    std::vector<Index> rows(n, 0);
    rows[root] = global[2];
    const Distribution on_root({BlockPartition::balanced(global[0], 1),
                                BlockPartition::balanced(global[1], 1),
                                BlockPartition::from_sizes(rows),
                                BlockPartition::balanced(global[3], 1)});
    ProcessGrid one(MPI_COMM_WORLD, on_root.grid_shape());
    for (const Shape& g : testing::grids_without_channel_split(4)) {
      SCOPED_TRACE("root " + std::to_string(root) + " from grid " +
                   g.to_string());
      ProcessGrid grid(MPI_COMM_WORLD, g);
      const HaloLayout spread = testing::with_halos(Distribution(global, g), 1);
      Redistribution<double> gather(grid, spread, one, HaloLayout(on_root));
      // Only the root receives; everyone else sends all it holds.
      const Index held = spread.shard(grid.rank()).volume();
      if (grid.rank() == root) {
        EXPECT_EQ(gather.plan().recv_volume() + gather.plan().kept.volume(),
                  global.volume());
        EXPECT_EQ(gather.plan().send_volume(), 0);
      } else {
        EXPECT_EQ(gather.plan().recv_volume(), 0);
        EXPECT_EQ(gather.plan().send_volume(), held);
      }
      DistTensor<double> x(grid, spread), all(one, HaloLayout(on_root));
      fill_global_values(x);
      gather.forward(x, all);
      if (grid.rank() == root) {  // the global row-major array
        std::vector<double> want(global.volume());
        for (Index i = 0; i < global.volume(); ++i) {
          want[i] = global_value(unravel(i, global), global);
        }
        EXPECT_EQ(std::vector<double>(all.data(), all.data() + all.size()),
                  want);
      } else {
        EXPECT_EQ(all.size(), 0);
      }
      DistTensor<double> back(grid, spread);
      fill_buffer(back, -2.0);
      gather.backward(all, back);  // scatter from the root
      EXPECT_EQ(wrong_cells(back), 0);
      EXPECT_TRUE(halos_hold(back, -2.0));
    }
  }
}

// Onto ranks 1 and n-1 (uneven: 3 and 2 rows); the others get nothing.
TEST(Redistribution, GathersOntoTwoRanks) {
  const int n = world_size();
  if (n < 3) GTEST_SKIP() << "needs 3 ranks or more";
  const Shape global{2, 3, 5, 4};
  std::vector<Index> rows(n, 0);
  rows[1] = 3;
  rows[n - 1] = 2;
  const Distribution onto_two({BlockPartition::balanced(global[0], 1),
                               BlockPartition::balanced(global[1], 1),
                               BlockPartition::from_sizes(rows),
                               BlockPartition::balanced(global[3], 1)});
  ProcessGrid two(MPI_COMM_WORLD, onto_two.grid_shape());
  ProcessGrid samples(MPI_COMM_WORLD, Shape{n, 1, 1, 1});
  const HaloLayout from(Distribution(global, samples.shape()));
  const HaloLayout to = testing::with_halos(onto_two, 1);
  Redistribution<double> gather(samples, from, two, to);
  DistTensor<double> x(samples, from), y(two, to);
  fill_global_values(x);
  fill_buffer(y, -4.0);
  gather.forward(x, y);
  EXPECT_EQ(wrong_cells(y), 0);
  EXPECT_TRUE(halos_hold(y, -4.0));
  const bool holder = two.rank() == 1 || two.rank() == n - 1;
  EXPECT_EQ(y.shard().volume(), rows[two.rank()] * 2 * 3 * 4);
  EXPECT_EQ(gather.plan().recv_volume() > 0 || gather.plan().kept.volume() > 0,
            holder);
  const std::vector<double> want = gathered(x), got = gathered(y);
  if (world_rank() == 0) {
    EXPECT_EQ(got, want);
  }
}

// Pure: what every part sends to another is what that one receives from it,
// and receives plus what is kept tile each destination shard.
TEST(RedistributionPlan, SendsMatchReceivesAndTileTheShards) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const int ndims = static_cast<int>(uniform(rng, 4, 5));
    Shape global = Shape::filled(ndims, 0);
    for (int d = 0; d < ndims; ++d) global[d] = uniform(rng, 0, 6);
    const std::vector<Shape> grids =
        factorizations(static_cast<int>(uniform(rng, 1, 8)), ndims);
    const Shape a = grids[uniform(rng, 0, grids.size() - 1)];
    const Shape b = grids[uniform(rng, 0, grids.size() - 1)];
    const Distribution from = drawn_layout(rng, global, a).distribution();
    const Distribution to = drawn_layout(rng, global, b).distribution();
    std::vector<RedistributionPlan> plans;
    for (int p = 0; p < from.num_parts(); ++p) {
      plans.push_back(plan_redistribution(from, to, p));
    }
    Index moved = 0;
    for (int p = 0; p < from.num_parts(); ++p) {
      const RedistributionPlan& plan = plans[p];
      EXPECT_EQ(plan.recv_volume() + plan.kept.volume(), to.shard(p).volume());
      EXPECT_EQ(plan.send_volume() + plan.kept.volume(),
                from.shard(p).volume());
      for (const RedistributionMessage& s : plan.sends) {
        EXPECT_NE(s.peer, p);
        EXPECT_FALSE(s.box.empty());
        const auto& in = plans[s.peer].recvs;
        const auto match = std::find_if(
            in.begin(), in.end(),
            [&](const auto& r) { return r.peer == p && r.box == s.box; });
        EXPECT_NE(match, in.end()) << "send " << p << " -> " << s.peer;
        moved += s.box.volume();
      }
    }
    Index received = 0;
    for (const RedistributionPlan& plan : plans) received += plan.recv_volume();
    EXPECT_EQ(moved, received);
  }
}

TEST(Redistribution, DifferentGlobalShapesFailOnEveryRank) {
  const int n = world_size();
  ProcessGrid rows(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  ProcessGrid samples(MPI_COMM_WORLD, Shape{n, 1, 1, 1});
  const HaloLayout a(Distribution(Shape{2, 3, 8, 8}, rows.shape()));
  const HaloLayout b(Distribution(Shape{2, 3, 8, 9}, samples.shape()));
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
      "redistribution between tensors of different global shapes: 2x3x8x8 "
      "and 2x3x8x9",
      [&] { Redistribution<float> r(rows, a, samples, b); });
  const HaloLayout five(
      Distribution(Shape{2, 3, 1, 8, 8}, Shape{1, 1, 1, n, 1}));
  ProcessGrid rows5(MPI_COMM_WORLD, five.distribution().grid_shape());
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch, "different global shapes",
      [&] { Redistribution<double> r(rows, a, rows5, five); });
}

TEST(Redistribution, LayoutOverAnotherGridFailsOnEveryRank) {
  const int n = world_size();
  ProcessGrid rows(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  ProcessGrid samples(MPI_COMM_WORLD, Shape{n, 1, 1, 1});
  const HaloLayout a(Distribution(Shape{2, 3, 8, 8}, rows.shape()));
  const HaloLayout b(Distribution(Shape{2, 3, 8, 8}, Shape{1, 1, 1, n + 1}));
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "redistribution: destination distribution over grid",
      [&] { Redistribution<float> r(rows, a, samples, b); });
}

TEST(Redistribution, GridsOverOtherRanksFailOnEveryRank) {
  const int n = world_size();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks or more";
  const int rank = world_rank();
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  const HaloLayout layout(Distribution(Shape{2, 3, 8, 8}, grid.shape()));
  // The same ranks, in reverse order.
  MPI_Comm reversed = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - rank, &reversed);
  {
    ProcessGrid back(reversed, grid.shape());
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kGridMismatch, "in another order",
        [&] { Redistribution<float> r(grid, layout, back, layout); });
  }
  MPI_Comm_free(&reversed);
  // Halves of the ranks.
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank < n / 2, rank, &half);
  int size = 0;
  MPI_Comm_size(half, &size);
  {
    ProcessGrid part(half, Shape{1, 1, size, 1});
    const HaloLayout there(Distribution(Shape{2, 3, 8, 8}, part.shape()));
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kGridMismatch, "over other ranks",
        [&] { Redistribution<float> r(grid, layout, part, there); });
  }
  MPI_Comm_free(&half);
}

TEST(Redistribution, TensorsOfAnotherLayoutFailOnEveryRank) {
  const int n = world_size();
  ProcessGrid rows(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  ProcessGrid samples(MPI_COMM_WORLD, Shape{n, 1, 1, 1});
  const Shape global{n, 3, 2 * n, 4};
  const HaloLayout a(Distribution(global, rows.shape()));
  const HaloLayout b(Distribution(global, samples.shape()));
  const HaloLayout a_halo = testing::with_halos(a.distribution(), 1);
  Redistribution<float> shuffle(rows, a, samples, b);
  DistTensor<float> x(rows, a), y(samples, b), x_halo(rows, a_halo);
  DistTensor<float> y_last(samples,
                           b.with_storage(StorageOrder::kChannelsLast));
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                            "src tensor's layout",
                            [&] { shuffle.forward(x_halo, y); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                            "dst tensor's layout",
                            [&] { shuffle.forward(x, y_last); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                            "dst_grad tensor's layout",
                            [&] { shuffle.backward(y_last, x); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                            "src_grad tensor's layout",
                            [&] { shuffle.backward(y, x_halo); });
  Redistribution<float> moved = std::move(shuffle);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState, "moved from",
                            [&] { shuffle.forward(x, y); });
  moved.forward(x, y);  // still works after the failures
  moved.backward(y, x);
}

}  // namespace
}  // namespace distconv
