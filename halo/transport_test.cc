// Below the exchange's own agreement on its layout: a host transport built
// on ranks whose plans do not pair up (each rank planned from a different
// layout) refuses on every rank before any message moves, instead of
// waiting for messages that never come or writing past the room a
// receiver made.
#include "halo/transport.h"

#include <memory>

#include "distconv/error.h"
#include "distconv/memory_space.h"
#include "gtest/gtest.h"
#include "halo/halo_exchange.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

// The last rank plans halos `odd` rows wide, the others 1.
void expect_refused(Index odd) {
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const Distribution dist(Shape{1, 2, 4 * world_size(), 5}, grid.shape());
  const Index width = world_rank() == world_size() - 1 ? odd : 1;
  const HaloLayout layout(dist, HaloWidths::symmetric({0, 0, width, 0}));
  const HaloPlan plan = make_halo_plan(layout, grid.rank());
  for (HaloTransport kind :
       {HaloTransport::kSharedMemory, HaloTransport::kPackedBuffers,
        HaloTransport::kMpiDatatypes}) {
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                              "the ranks planned different layouts", [&] {
                                HaloSetupOptions setup;
                                setup.transport = kind;
                                internal::make_host_transport<float>(
                                    grid, layout, plan, setup);
                              });
  }
}

TEST(Transport, RefusesALargerMessageThanItsReceiverPlanned) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  expect_refused(3);
}

TEST(Transport, RefusesMessagesItsPeerDoesNotPlan) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  expect_refused(0);
}

TEST(Transport, PairsThatAgreeConnect) {
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const Distribution dist(Shape{1, 2, 4 * world_size(), 5}, grid.shape());
  const HaloLayout layout(dist, HaloWidths::symmetric({0, 0, 1, 0}));
  const HaloPlan plan = make_halo_plan(layout, grid.rank());
  const auto make = [&] {
    internal::make_host_transport<float>(grid, layout, plan, {});
  };
  EXPECT_NO_THROW(make());
}

}  // namespace
}  // namespace distconv
