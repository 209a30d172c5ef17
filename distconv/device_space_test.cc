#include "distconv/device_space.h"

#include <mpi.h>

#include <utility>
#include <vector>

#include "distconv/dist_tensor.h"
#include "gtest/gtest.h"
#include "tests/mpi_testing.h"
#include "tests/view_access.h"

namespace distconv {
namespace {

// Host code cannot index a view of GPU memory (it does not compile).
static_assert(!testing::kHostIndexable<StridedView<float, DeviceSpace>>);
static_assert(
    !testing::kHostIndexable<
        decltype(std::declval<DistTensor<float, DeviceSpace>&>().interior())>);

// A DistTensor in GPU memory: zeroed on allocation, and host data survives a
// round trip through it. Skips (visibly) where there is no GPU.
TEST(DeviceSpace, DistTensorBufferRoundTrip) {
  if (DeviceSpace::device_count() == 0) {
    GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  }
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, testing::world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{2, 3, 5 * testing::world_size(), 7}, grid.shape()),
      HaloWidths::symmetric({0, 0, 1, 1}));
  DistTensor<float, DeviceSpace> x(grid, layout);
  const size_t bytes = sizeof(float) * x.size();
  std::vector<float> host(x.size(), -1.0f);
  DeviceSpace::copy_to_host(host.data(), x.data(), bytes);
  for (float v : host) ASSERT_EQ(v, 0.0f);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
  DeviceSpace::copy_to_device(x.data(), host.data(), bytes);
  std::vector<float> back(x.size());
  DeviceSpace::copy_to_host(back.data(), x.data(), bytes);
  EXPECT_EQ(back, host);
}

}  // namespace
}  // namespace distconv
