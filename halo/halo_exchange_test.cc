#include "halo/halo_exchange.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "distconv/error.h"
#include "gtest/gtest.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::global_value;
using testing::source_of;
using testing::world_rank;
using testing::world_size;

constexpr double kSentinel = -1;
constexpr HaloTransport kTransports[] = {HaloTransport::kPackedBuffers,
                                         HaloTransport::kMpiDatatypes,
                                         HaloTransport::kSharedMemory};

// A small integer contribution of a halo cell, exact when summed.
double contribution(int part, const Shape& local_cell, const Shape& local) {
  return 1 + (part * 7 + linear_index(local_cell, local)) % 13;
}

// Interior cells get their global value, halo cells the sentinel.
template <typename T>
void fill_interior(DistTensor<T>& x) {
  const Box interior = x.layout().interior(x.part());
  const Shape origin = x.buffer_box().lower;
  x.buffer().for_each([&](const Shape& i, T& v) {
    v = interior.contains(i) ? global_value(i + origin, x.global_shape())
                             : kSentinel;
  });
}

// After a forward exchange every halo cell holds its source's global value;
// cells past an open boundary still hold the sentinel.
void ExpectForward(const HaloLayout& layout, const ProcessGrid& grid,
                   HaloTransport transport) {
  DistTensor<double> x(grid, layout);
  fill_interior(x);
  HaloExchange<double> halo(grid, layout, {transport});
  halo.exchange(x);
  const Shape origin = x.buffer_box().lower;
  x.buffer().for_each([&](const Shape& i, double& v) {
    const auto src = source_of(layout, i + origin);
    const double expected =
        src ? global_value(*src, layout.distribution().global_shape())
            : kSentinel;
    ASSERT_EQ(v, expected) << "local cell " << i << " on rank " << grid.rank();
  });
}

// The serial reverse exchange: each owned cell's global value combined with
// every halo copy's contribution, computed cell by cell from all parts'
// buffers.
// The result is indexed like the shard (row-major over its extent).
std::vector<double> SerialReverse(const HaloLayout& layout, int me,
                                  HaloReduction reduction) {
  const Shape& global = layout.distribution().global_shape();
  const Box shard = layout.shard(me);
  std::vector<double> expected(shard.volume());
  for (Index i = 0; i < shard.volume(); ++i) {
    expected[i] = global_value(shard.lower + unravel(i, shard.extent), global);
  }
  for (int q = 0; q < layout.num_parts(); ++q) {
    const Shape local = layout.local_shape(q);
    const Box interior = layout.interior(q);
    const Shape origin = layout.buffer_box(q).lower;
    for (Index i = 0; i < local.volume(); ++i) {
      const Shape c = unravel(i, local);
      if (interior.contains(c)) continue;
      const auto src = source_of(layout, c + origin);
      if (!src || !shard.contains(*src)) continue;
      double& e = expected[linear_index(*src - shard.lower, shard.extent)];
      const double add = contribution(q, c, local);
      e = reduction == HaloReduction::kSum ? e + add : std::max(e, add);
    }
  }
  return expected;
}

void ExpectReverse(const HaloLayout& layout, const ProcessGrid& grid,
                   HaloTransport transport, HaloReduction reduction) {
  DistTensor<double> x(grid, layout);
  fill_interior(x);
  const Box interior = layout.interior(grid.rank());
  const Shape local = x.local_shape();
  x.buffer().for_each([&](const Shape& i, double& v) {
    if (!interior.contains(i)) v = contribution(grid.rank(), i, local);
  });
  HaloExchange<double> halo(grid, layout, {transport});
  halo.exchange(x, {HaloDirection::kReverse, reduction});
  const auto expected = SerialReverse(layout, grid.rank(), reduction);
  x.buffer().for_each([&](const Shape& i, double& v) {
    if (interior.contains(i)) {
      ASSERT_EQ(v, expected[linear_index(i - interior.lower, interior.extent)])
          << "owned cell " << i << " on rank " << grid.rank();
    } else {
      ASSERT_EQ(v, contribution(grid.rank(), i, local)) << "halo changed";
    }
  });
}

// <Hx, y> == <x, H^T y> with x zero outside the interior, in double.
void ExpectAdjoint(const HaloLayout& layout, const ProcessGrid& grid,
                   HaloTransport transport) {
  std::mt19937_64 rng(1000 + grid.rank());
  std::uniform_real_distribution<double> u(-1, 1);
  DistTensor<double> x(grid, layout), y(grid, layout);
  const Box interior = layout.interior(grid.rank());
  x.buffer().for_each([&](const Shape& i, double& v) {
    v = interior.contains(i) ? u(rng) : 0;
  });
  y.buffer().for_each([&](const Shape&, double& v) { v = u(rng); });
  const std::vector<double> x0(x.data(), x.data() + x.size());
  HaloExchange<double> halo(grid, layout, {transport});
  halo.exchange(x);  // x := Hx
  double hx_y = 0;
  for (Index i = 0; i < x.size(); ++i) hx_y += x.data()[i] * y.data()[i];
  halo.exchange(y, {HaloDirection::kReverse});  // interior of y := H^T y
  double x_hty = 0;
  x.buffer().for_each([&](const Shape& i, double& v) {
    if (interior.contains(i)) {
      const Index k = &v - x.data();  // storage offset
      x_hty += x0[k] * y.data()[k];
    }
  });
  hx_y = testing::sum_over(grid.comm(), hx_y);
  x_hty = testing::sum_over(grid.comm(), x_hty);
  EXPECT_NEAR(hx_y, x_hty, 1e-12 * std::max(1.0, std::abs(hx_y)));
}

// Runs check(layout, grid, transport) for every layout case on every
// factorisation of the rank count into 4D and 5D grids, with both transports.
template <typename Check>
void ForEveryGridAndLayout(Check check) {
  for (int ndims : {4, 5}) {
    for (const Shape& shape : testing::factorizations(world_size(), ndims)) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      for (const testing::LayoutCase& c : testing::layout_cases(shape)) {
        SCOPED_TRACE(c.name + " over " + shape.to_string());
        for (HaloTransport t : kTransports) check(c.layout, grid, t);
        // Stop at the first broken case on every rank together.
        if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure()) !=
            0)
          return;
      }
    }
  }
}

TEST(HaloExchange, ForwardFillsEveryHaloCellFromItsOwner) {
  ForEveryGridAndLayout(ExpectForward);
}

TEST(HaloExchange, ReverseSumMatchesTheSerialSum) {
  ForEveryGridAndLayout(
      [](const HaloLayout& l, const ProcessGrid& g, HaloTransport t) {
        ExpectReverse(l, g, t, HaloReduction::kSum);
      });
}

TEST(HaloExchange, ReverseMaxMatchesTheSerialMax) {
  ForEveryGridAndLayout(
      [](const HaloLayout& l, const ProcessGrid& g, HaloTransport t) {
        ExpectReverse(l, g, t, HaloReduction::kMax);
      });
}

TEST(HaloExchange, ReverseIsTheAdjointOfForward) {
  ForEveryGridAndLayout(ExpectAdjoint);
}

// bf16 and fp16 cells travel as their 16 bits: forward gives every halo
// cell its owner's bits (any finite pattern); the reverse sum adds in
// fp32, exact here (small integers).
template <typename N>
void ExpectNarrow(const HaloLayout& layout, const ProcessGrid& grid,
                  HaloTransport transport) {
  // Below the first infinity's bits.
  constexpr std::uint64_t kFinite = std::is_same_v<N, bf16> ? 0x7f00 : 0x7b00;
  const Shape& global = layout.distribution().global_shape();
  const auto bits = [&](const Shape& g) {
    const auto k = static_cast<std::uint64_t>(linear_index(g, global));
    return N::from_bits(static_cast<std::uint16_t>(k * 2654435761u % kFinite));
  };
  const N sentinel = -1.0f;
  DistTensor<N> x(grid, layout);
  const Box interior = layout.interior(grid.rank());
  const Shape origin = x.buffer_box().lower;
  x.buffer().for_each([&](const Shape& i, N& v) {
    v = interior.contains(i) ? bits(i + origin) : sentinel;
  });
  HaloExchange<N> halo(grid, layout, {transport});
  halo.exchange(x);
  x.buffer().for_each([&](const Shape& i, N& v) {
    const auto src = source_of(layout, i + origin);
    ASSERT_EQ(v.bits(), (src ? bits(*src) : sentinel).bits())
        << "local cell " << i << " on rank " << grid.rank();
  });

  // Owned cells hold (global index mod 17), halos their contribution.
  const Shape local = x.local_shape();
  const auto owned = [&](const Shape& g) {
    return static_cast<double>(linear_index(g, global) % 17);
  };
  x.buffer().for_each([&](const Shape& i, N& v) {
    v = static_cast<float>(interior.contains(i)
                               ? owned(i + origin)
                               : contribution(grid.rank(), i, local));
  });
  halo.exchange(x, {HaloDirection::kReverse, HaloReduction::kSum});
  const std::vector<double> added =
      SerialReverse(layout, grid.rank(), HaloReduction::kSum);
  const Box shard = layout.shard(grid.rank());
  x.buffer().for_each([&](const Shape& i, N& v) {
    if (!interior.contains(i)) return;
    const Shape g = i + origin;
    // SerialReverse starts from global_value (1 + the index): take it off.
    const double want = added[linear_index(g - shard.lower, shard.extent)] -
                        global_value(g, global) + owned(g);
    ASSERT_EQ(static_cast<float>(v), want) << "owned cell " << i;
  });
}

TEST(HaloExchange, MovesAndSumsBf16Cells) {
  ForEveryGridAndLayout(ExpectNarrow<bf16>);
}

TEST(HaloExchange, MovesAndSumsFp16Cells) {
  ForEveryGridAndLayout(ExpectNarrow<fp16>);
}

TEST(HaloExchange, TwoExchangesInFlightWithComputeBetween) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{2, 2, 3 * world_size() + 1, 5}, grid.shape()),
      HaloWidths::symmetric({0, 0, 2, 1}),
      {Boundary::kOpen, Boundary::kOpen, Boundary::kPeriodic,
       Boundary::kPeriodic});
  DistTensor<float> a(grid, layout), b(grid, layout);
  fill_interior(a);
  fill_interior(b);
  HaloExchange<float> ha(grid, layout),
      hb(grid, layout, {HaloTransport::kMpiDatatypes});
  ha.start(a);
  hb.start(b);
  EXPECT_TRUE(ha.in_flight());
  double interior_sum = 0;  // "compute" on the interior meanwhile
  a.interior().for_each([&](const Shape&, float& v) { interior_sum += v; });
  hb.wait();
  ha.wait();
  EXPECT_FALSE(ha.in_flight());
  EXPECT_GT(interior_sum, 0);
  const Shape origin = a.buffer_box().lower;
  a.buffer().for_each([&](const Shape& i, float& v) {
    const Shape src = *source_of(layout, i + origin);
    ASSERT_EQ(v, static_cast<float>(
                     global_value(src, layout.distribution().global_shape())));
    ASSERT_EQ(b.buffer()(i), v);
  });
}

// Many exchanges in a row through one object, alternating directions, with
// new data each time: the shared-memory transport must not let a sender
// overwrite an inbox before its owner has read it. Peers in and out of the
// shared group (ranks split by parity) mix shared and packed messages.
TEST(HaloExchange, RepeatedExchangesWithSharedAndUnsharedPeers) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{1, 2, 2 * world_size() + 1, 6}, grid.shape()),
      HaloWidths::symmetric({0, 0, 3, 2}),
      {Boundary::kOpen, Boundary::kOpen, Boundary::kPeriodic,
       Boundary::kPeriodic});
  MPI_Comm parity = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, world_rank(), &parity);
  for (MPI_Comm group : {MPI_COMM_NULL, parity}) {
    for (HaloTransport t : kTransports) {
      HaloExchange<double> halo(grid, layout, {t, group});
      DistTensor<double> x(grid, layout);
      const Shape origin = x.buffer_box().lower;
      const Shape& global = layout.distribution().global_shape();
      const Box interior = layout.interior(grid.rank());
      for (int round = 0; round < 6; ++round) {
        x.buffer().for_each([&](const Shape& i, double& v) {
          v = interior.contains(i) ? global_value(i + origin, global) * round
                                   : kSentinel;
        });
        halo.exchange(x);
        x.buffer().for_each([&](const Shape& i, double& v) {
          const auto src = source_of(layout, i + origin);
          ASSERT_EQ(v, src ? global_value(*src, global) * round : kSentinel)
              << "round " << round << " cell " << i;
        });
        if (round % 2) halo.exchange(x, {HaloDirection::kReverse});
      }
    }
  }
  MPI_Comm_free(&parity);
}

TEST(HaloExchange, MisuseFailsOnEveryRankWithoutHanging) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  const Distribution dist(Shape{1, 2, 4, 4 * world_size()}, grid.shape());
  const HaloLayout layout(dist, HaloWidths::symmetric({0, 0, 0, 1}));
  const HaloLayout wider(dist, HaloWidths::symmetric({0, 0, 0, 2}));
  HaloExchange<float> halo(grid, layout);
  EXPECT_EQ(halo.transport(), HaloTransport::kSharedMemory);  // the default
  DistTensor<float> x(grid, layout), y(grid, wider);
  fill_interior(x);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "no exchange in flight", [&] { halo.wait(); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                            "does not have the layout", [&] { halo.start(y); });
  halo.start(x);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "while an exchange is in flight",
                            [&] { halo.start(x); });
  halo.wait();  // the first exchange is intact
  const Shape origin = x.buffer_box().lower;
  x.buffer().for_each([&](const Shape& i, float& v) {
    const auto src = source_of(layout, i + origin);
    ASSERT_EQ(v, src ? global_value(*src, dist.global_shape()) : kSentinel);
  });
  const ProcessGrid other(MPI_COMM_WORLD, Shape{1, 1, 1, 1, world_size()});
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kGridMismatch,
                            "used with a process grid",
                            [&] { HaloExchange<float> h(other, layout); });
  // A transport for device memory cannot move host memory.
  for (HaloTransport device :
       {HaloTransport::kHostStaged, HaloTransport::kNccl,
        HaloTransport::kCudaIpc}) {
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                              "does not move host memory", [&] {
                                HaloExchange<float> h(grid, layout, {device});
                              });
  }
  // Ranks that disagree on the transport, or on the shared group, fail
  // together instead of waiting for messages that never come.
  const HaloTransport mixed = world_rank() == world_size() - 1
                                  ? HaloTransport::kMpiDatatypes
                                  : HaloTransport::kSharedMemory;
  if (world_size() > 1) {
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kGridMismatch,
        "ranks disagree on the halo exchange: halo transport shared_memory "
        "on rank 0, mpi_datatypes on rank " +
            std::to_string(world_size() - 1),
        [&] { HaloExchange<float> h(grid, layout, {mixed}); });
    const MPI_Comm group = world_rank() == 0 ? MPI_COMM_WORLD : MPI_COMM_NULL;
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
                              "some ranks pass a shared_memory_comm", [&] {
                                HaloExchange<float> h(
                                    grid, layout,
                                    {HaloTransport::kSharedMemory, group});
                              });
  }
  HaloExchange<float> moved = std::move(halo);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "after it was moved from", [&] { halo.start(x); });
  moved.exchange(x);
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kInvalidArgument, "exceeds the tensor extent",
      [&] {
        HaloLayout(dist, HaloWidths::symmetric({0, 0, 5, 0}));
      });
}

}  // namespace
}  // namespace distconv
