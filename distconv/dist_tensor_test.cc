#include "distconv/dist_tensor.h"

#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

#include "distconv/error.h"
#include "distconv/scatter_gather.h"
#include "gtest/gtest.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"
#include "tests/view_access.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::global_value;
using testing::world_rank;
using testing::world_size;

std::vector<float> global_tensor(const Shape& shape) {
  std::vector<float> all(shape.volume());
  for (Index i = 0; i < shape.volume(); ++i) {
    all[i] = static_cast<float>(global_value(unravel(i, shape), shape));
  }
  return all;
}

// Scatter puts every global element into its owner's interior at the right
// place, leaves halos alone, and gather brings back the same tensor.
TEST(DistTensor, ScatterGatherRoundTripOnEveryGridAndLayout) {
  for (int ndims : {4, 5}) {
    for (const Shape& shape : testing::factorizations(world_size(), ndims)) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      for (const testing::LayoutCase& c : testing::layout_cases(shape)) {
        SCOPED_TRACE(c.name + " over " + shape.to_string());
        const Shape& global = c.layout.distribution().global_shape();
        const std::vector<float> all = global_tensor(global);
        DistTensor<float> x(grid, c.layout);
        x.buffer().for_each([](const Shape&, float& v) { v = -1; });
        scatter(world_rank() == 0 ? all.data() : nullptr, x, 0);
        const Box shard = x.shard();
        const Box interior = c.layout.interior(grid.rank());
        x.buffer().for_each([&](const Shape& i, float& v) {
          if (interior.contains(i)) {
            const Shape g = i - interior.lower + shard.lower;
            ASSERT_EQ(v, global_value(g, global)) << "at " << i;
          } else {
            ASSERT_EQ(v, -1) << "scatter wrote halo cell " << i;
          }
        });
        const int root = world_size() - 1;
        std::vector<float> back(global.volume(), 0);
        gather(x, world_rank() == root ? back.data() : nullptr, root);
        if (world_rank() == root) {
          ASSERT_EQ(back, all);
        }
      }
    }
  }
}

// Gather is the adjoint of scatter: <S x, y> == <x, G y> in double, with x a
// global tensor on the root and y distributed (halos of y ignored by both).
TEST(DistTensor, GatherIsTheAdjointOfScatter) {
  for (const Shape& shape : testing::factorizations(world_size(), 5)) {
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    for (const testing::LayoutCase& c : testing::layout_cases(shape)) {
      SCOPED_TRACE(c.name + " over " + shape.to_string());
      const Shape& global = c.layout.distribution().global_shape();
      std::mt19937_64 rng(7 + world_rank());
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> x(world_rank() == 0 ? global.volume() : 0);
      for (double& v : x) v = u(rng);
      DistTensor<double> sx(grid, c.layout), y(grid, c.layout);
      y.buffer().for_each([&](const Shape&, double& v) { v = u(rng); });
      scatter(x.data(), sx, 0);
      double sx_y = 0;
      sx.interior().for_each(
          [&](const Shape& i, double& v) { sx_y += v * y.interior()(i); });
      sx_y = testing::sum_over(MPI_COMM_WORLD, sx_y);
      std::vector<double> gy(x.size());
      gather(y, gy.data(), 0);
      double x_gy = 0;
      for (size_t i = 0; i < x.size(); ++i) x_gy += x[i] * gy[i];
      MPI_Bcast(&x_gy, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      EXPECT_NEAR(sx_y, x_gy, 1e-12 * std::max(1.0, std::abs(x_gy)));
    }
  }
}

TEST(DistTensor, ViewsShareTheBuffer) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{2, 3, 4 * world_size(), 5}, grid.shape()),
      HaloWidths{{0, 0, 1, 2}, {0, 0, 2, 1}});
  DistTensor<double> x(grid, layout);
  EXPECT_TRUE(x.owns_buffer());
  EXPECT_EQ(x.local_shape(), (Shape{2, 3, 7, 8}));
  for (Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i);
  StridedView<double> in = x.interior();
  EXPECT_EQ(in.extent(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(&in({0, 0, 0, 0}), x.data() + 1 * 8 + 2);
  EXPECT_EQ(in({1, 2, 3, 4}), linear_index({1, 2, 4, 6}, x.local_shape()));
  StridedView<double> upper_h = x.halo(2, Side::kUpper);
  EXPECT_EQ(upper_h.extent(), (Shape{2, 3, 2, 8}));
  EXPECT_EQ(&upper_h({0, 0, 0, 0}), x.data() + 5 * 8);
  EXPECT_EQ(x.halo(3, Side::kLower).extent(), (Shape{2, 3, 7, 2}));
  upper_h({1, 1, 1, 7}) = -5;
  EXPECT_EQ(x.data()[linear_index({1, 1, 6, 7}, x.local_shape())], -5);
}

// A memory space the host may not read (as GPU memory), kept in host memory
// so that this test runs everywhere.
struct OpaqueSpace {
  static constexpr const char* kName = "opaque";
  static constexpr bool kHostAccessible = false;
  static void* allocate(std::size_t bytes) {
    return HostSpace::allocate(bytes);
  }
  static void deallocate(void* p) noexcept { HostSpace::deallocate(p); }
};

static_assert(testing::kHostIndexable<StridedView<float>>);
static_assert(testing::kHostIndexable<StridedView<const float>>);
static_assert(!testing::HostIndexable<StridedView<float, OpaqueSpace>>::value);
static_assert(!testing::HostIterable<StridedView<float, OpaqueSpace>>::value);

// Views of a tensor carry its memory space: the same boxes and addresses
// as in host memory, but no element access on the host.
TEST(DistTensor, ViewsCarryTheirMemorySpace) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{2, 3, 4 * world_size(), 5}, grid.shape()),
      HaloWidths{{0, 0, 1, 2}, {0, 0, 2, 1}});
  DistTensor<double, OpaqueSpace> x(grid, layout);
  const auto in = x.interior();
  static_assert(
      std::is_same_v<decltype(in), const StridedView<double, OpaqueSpace>>);
  static_assert(!testing::kHostIndexable<decltype(in)>);
  static_assert(
      !testing::kHostIndexable<decltype(std::as_const(x).interior())>);
  EXPECT_EQ(in.extent(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(in.data(), x.data() + 1 * 8 + 2);
  EXPECT_EQ(x.halo(2, Side::kUpper).data(), x.data() + 5 * 8);
}

TEST(DistTensor, WrapsACallerOwnedBuffer) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{world_size(), 1, 1, 1});
  const HaloLayout layout(
      Distribution(Shape{world_size(), 2, 3, 3}, grid.shape()));
  std::vector<float> mine(18, 7.0f);
  DistTensor<float> x =
      DistTensor<float>::wrap(grid, layout, mine.data(), mine.size());
  EXPECT_FALSE(x.owns_buffer());
  EXPECT_EQ(x.data(), mine.data());
  x.interior()({0, 1, 2, 2}) = 3;
  EXPECT_EQ(mine[17], 3);
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch, "wrapped buffer holds 17",
      [&] { DistTensor<float>::wrap(grid, layout, mine.data(), 17); });
}

TEST(DistTensor, MismatchedGridAndBadRootFailOnEveryRank) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{world_size(), 1, 1, 1});
  const HaloLayout other(
      Distribution(Shape{4, 4, 4, 4}, Shape{1, 1, 1, world_size() + 1}));
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "used with a process grid",
                            [&] { DistTensor<float> x(grid, other); });
  const HaloLayout layout(Distribution(Shape{4, 4, 4, 4}, grid.shape()));
  DistTensor<float> x(grid, layout);
  std::vector<float> all(256);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "root",
                            [&] { gather(x, all.data(), -1); });
  // The root forgot its array: every rank hears about it, nobody hangs.
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                            "global array on root 0 is null",
                            [&] { scatter<float>(nullptr, x, 0); });
}

}  // namespace
}  // namespace distconv
