// The halo exchange on device memory against the host one (itself checked
// against the serial oracle in halo_exchange_test.cc), bit for bit, on
// every layout case and grid, for every element type and device transport;
// its adjoint test in double; misuse. GPU cases skip visibly on a machine
// without a GPU; the checks made before any device work (transport
// agreement and memory space, no device at all) run everywhere.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "gtest/gtest.h"
#include "halo/halo_exchange.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

bool have_gpu() { return DeviceSpace::device_count() > 0; }

// Ranks take GPUs round robin. CUDA IPC is tested always (ranks sharing a
// GPU or not); NCCL where each rank has its own, through one communicator
// over MPI_COMM_WORLD (grids over it number ranks alike) handed to the
// exchanges, as a framework would.
class DeviceHalo : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) {
      GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
    }
    ASSERT_NO_THROW(DeviceSpace::use_device_of_rank(world_rank()));
    if (world_size() > DeviceSpace::device_count()) return;
    ncclUniqueId id;
    ncclResult_t made = ncclSuccess;  // every rank reaches the Bcast
    if (world_rank() == 0) made = ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&made, sizeof(made), MPI_BYTE, 0, MPI_COMM_WORLD);
    ASSERT_EQ(made, ncclSuccess);
    ASSERT_EQ(ncclCommInitRank(&nccl_, world_size(), id, world_rank()),
              ncclSuccess);
  }
  void TearDown() override {
    if (nccl_ != nullptr) ncclCommDestroy(nccl_);
  }
  std::vector<HaloSetupOptions> configs() const {
    std::vector<HaloSetupOptions> out;
    for (HaloTransport t : transports()) out.push_back(config(t));
    return out;
  }
  std::vector<HaloTransport> transports() const {
    // The test scripts run every rank on one node: CUDA IPC always runs.
    std::vector<HaloTransport> t{HaloTransport::kHostStaged,
                                 HaloTransport::kCudaIpc};
    if (nccl_ != nullptr) t.push_back(HaloTransport::kNccl);
    return t;
  }
  HaloSetupOptions config(HaloTransport t) const {
    HaloSetupOptions c;
    c.transport = t;
    if (t == HaloTransport::kNccl) c.nccl_comm = nccl_;
    return c;
  }
  ncclComm_t nccl_ = nullptr;
};

// The host type a device type's results are compared in.
template <typename T>
using HostOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
std::vector<T> to_device_type(const std::vector<HostOf<T>>& host) {
  std::vector<T> out;
  for (HostOf<T> v : host) out.push_back(static_cast<T>(v));
  return out;
}

// The device tensor's buffer, read back.
template <typename T>
std::vector<T> read(const DistTensor<T, DeviceSpace>& x) {
  std::vector<T> out(x.size());
  DeviceSpace::copy_to_host(out.data(), x.data(), sizeof(T) * out.size());
  return out;
}

template <typename T>
void write(DistTensor<T, DeviceSpace>& x, const std::vector<T>& values) {
  DeviceSpace::copy_to_device(x.data(), values.data(),
                              sizeof(T) * values.size());
}

// Runs `options` on the same random buffer through the host exchange and
// the device one; the buffers must agree bit for bit. Values are multiples
// of 1/8 up to 8, exact in every type.
template <typename T>
void ExpectLikeTheHost(const HaloLayout& layout, const ProcessGrid& grid,
                       const HaloSetupOptions& config,
                       const HaloCallOptions& options) {
  using H = HostOf<T>;
  std::mt19937_64 rng(17 + grid.rank());
  std::uniform_int_distribution<int> k(-64, 64);
  DistTensor<H> host(grid, layout);
  for (Index i = 0; i < host.size(); ++i) host.data()[i] = k(rng) / H(8);
  DistTensor<T, DeviceSpace> dev(grid, layout);
  write(dev, to_device_type<T>(
                 std::vector<H>(host.data(), host.data() + host.size())));
  HaloExchange<H> host_halo(grid, layout, {HaloTransport::kPackedBuffers});
  HaloExchange<T, DeviceSpace> dev_halo(grid, layout, config);
  host_halo.exchange(host, options);
  dev_halo.exchange(dev, options);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> want =
      to_device_type<T>(std::vector<H>(host.data(), host.data() + host.size()));
  const std::vector<T> got = read(dev);
  ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(T) * want.size()), 0)
      << "rank " << grid.rank() << " transport "
      << static_cast<int>(config.transport);
}

// check(layout, grid, config) on every layout case over every
// factorisation of the rank count into 4D and 5D grids.
template <typename Check>
void ForEveryGridAndLayout(const std::vector<HaloSetupOptions>& configs,
                           Check check) {
  for (int ndims : {4, 5}) {
    for (const Shape& shape : testing::factorizations(world_size(), ndims)) {
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      for (const testing::LayoutCase& c : testing::layout_cases(shape)) {
        SCOPED_TRACE(c.name + " over " + shape.to_string());
        for (const HaloSetupOptions& k : configs) {
          check(c.layout, grid, k);
        }
        if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure()) !=
            0) {
          return;
        }
      }
    }
  }
}

constexpr HaloCallOptions kForward{};
constexpr HaloCallOptions kReverseSum{HaloDirection::kReverse,
                                      HaloReduction::kSum};
constexpr HaloCallOptions kReverseMax{HaloDirection::kReverse,
                                      HaloReduction::kMax};

TEST_F(DeviceHalo, Fp32ForwardAndReverseLikeTheHost) {
  for (HaloCallOptions o : {kForward, kReverseSum, kReverseMax}) {
    ForEveryGridAndLayout(
        configs(), [&](const HaloLayout& l, const ProcessGrid& g,
                       const HaloSetupOptions& t) {
          ExpectLikeTheHost<float>(l, g, t, o);
          ExpectLikeTheHost<float>(l.with_storage(StorageOrder::kChannelsLast),
                                   g, t, o);
        });
  }
}

TEST_F(DeviceHalo, Fp64ForwardAndReverseLikeTheHost) {
  for (HaloCallOptions o : {kForward, kReverseSum, kReverseMax}) {
    ForEveryGridAndLayout(configs(),
                          [&](const HaloLayout& l, const ProcessGrid& g,
                              const HaloSetupOptions& t) {
                            ExpectLikeTheHost<double>(l, g, t, o);
                          });
  }
}

// fp16 and bf16 (CUDA's and distconv's each): copies and max commute with
// rounding, so they match the fp32 host exchange exactly; sums are not
// compared (rounded each step).
TEST_F(DeviceHalo, Fp16AndBf16ForwardAndReverseMaxLikeTheHost) {
  for (HaloCallOptions o : {kForward, kReverseMax}) {
    ForEveryGridAndLayout(configs(),
                          [&](const HaloLayout& l, const ProcessGrid& g,
                              const HaloSetupOptions& t) {
                            ExpectLikeTheHost<__half>(l, g, t, o);
                            ExpectLikeTheHost<__nv_bfloat16>(l, g, t, o);
                            ExpectLikeTheHost<bf16>(l, g, t, o);
                            ExpectLikeTheHost<fp16>(l, g, t, o);
                          });
  }
}

// <Hx, y> == <x, H^T y> with x zero outside the interior, in double.
TEST_F(DeviceHalo, ReverseIsTheAdjointOfForward) {
  ForEveryGridAndLayout(
      configs(), [](const HaloLayout& layout, const ProcessGrid& grid,
                    const HaloSetupOptions& config) {
        std::mt19937_64 rng(1000 + grid.rank());
        std::uniform_real_distribution<double> u(-1, 1);
        DistTensor<double> hx(grid, layout), hy(grid, layout);
        const Box interior = layout.interior(grid.rank());
        hx.buffer().for_each([&](const Shape& i, double& v) {
          v = interior.contains(i) ? u(rng) : 0;
        });
        hy.buffer().for_each([&](const Shape&, double& v) { v = u(rng); });
        const std::vector<double> x0(hx.data(), hx.data() + hx.size());
        const std::vector<double> y0(hy.data(), hy.data() + hy.size());
        DistTensor<double, DeviceSpace> x(grid, layout), y(grid, layout);
        write(x, x0);
        write(y, y0);
        HaloExchange<double, DeviceSpace> halo(grid, layout, config);
        halo.exchange(x);
        halo.exchange(y, kReverseSum);
        const std::vector<double> hx_values = read(x), ht_y = read(y);
        double hx_y = 0, x_hty = 0;
        for (size_t i = 0; i < x0.size(); ++i) hx_y += hx_values[i] * y0[i];
        hx.buffer().for_each([&](const Shape& i, double& v) {
          if (interior.contains(i)) {
            const Index k = &v - hx.data();
            x_hty += x0[k] * ht_y[k];
          }
        });
        hx_y = testing::sum_over(grid.comm(), hx_y);
        x_hty = testing::sum_over(grid.comm(), x_hty);
        EXPECT_NEAR(hx_y, x_hty, 1e-12 * std::max(1.0, std::abs(hx_y)));
      });
}

// The caller's stream orders everything: two exchanges in flight on one
// stream with other work queued between start() and wait(), repeated with
// new data each round (the staged buffers are reused). Here the NCCL
// exchanges make their own communicators.
TEST_F(DeviceHalo, RepeatedExchangesOnTheCallersStream) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{2, 3, 3 * world_size() + 1, 8}, grid.shape()),
      HaloWidths::symmetric({0, 0, 2, 1}),
      {Boundary::kOpen, Boundary::kOpen, Boundary::kPeriodic,
       Boundary::kPeriodic});
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  for (HaloTransport t : transports()) {
    HaloSetupOptions config;
    config.transport = t;
    const Exec<DeviceSpace> exec(stream);
    HaloExchange<float, DeviceSpace> ha(grid, layout, config, exec),
        hb(grid, layout, config, exec);
    DistTensor<float> host(grid, layout);
    DistTensor<float, DeviceSpace> a(grid, layout), b(grid, layout),
        scratch(grid, layout);
    HaloExchange<float> host_halo(grid, layout);
    for (int round = 1; round <= 4; ++round) {
      for (Index i = 0; i < host.size(); ++i) {
        host.data()[i] = static_cast<float>((i * 7 + grid.rank()) % 23) * round;
      }
      const std::vector<float> values(host.data(), host.data() + host.size());
      write(a, values);
      write(b, values);
      ha.start(a);
      hb.start(b);
      EXPECT_TRUE(ha.in_flight());
      ASSERT_EQ(cudaMemsetAsync(scratch.data(), round,
                                sizeof(float) * scratch.size(), stream),
                cudaSuccess);
      hb.wait();
      ha.wait();
      EXPECT_FALSE(ha.in_flight());
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      host_halo.exchange(host);
      const std::vector<float> want(host.data(), host.data() + host.size());
      EXPECT_EQ(read(a), want) << "round " << round;
      EXPECT_EQ(read(b), want) << "round " << round;
    }
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(DeviceHalo, MisuseFailsOnEveryRankWithoutHanging) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  const Distribution dist(Shape{1, 2, 4, 4 * world_size()}, grid.shape());
  const HaloLayout layout(dist, HaloWidths::symmetric({0, 0, 0, 1}));
  const HaloLayout wider(dist, HaloWidths::symmetric({0, 0, 0, 2}));
  HaloExchange<float, DeviceSpace> halo(grid, layout);
  EXPECT_EQ(halo.transport(), HaloTransport::kHostStaged);  // the default
  DistTensor<float, DeviceSpace> x(grid, layout), y(grid, wider);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "no exchange in flight", [&] { halo.wait(); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                            "does not have the layout", [&] { halo.start(y); });
  halo.start(x);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "while an exchange is in flight",
                            [&] { halo.start(x); });
  halo.wait();
  const ProcessGrid other(MPI_COMM_WORLD, Shape{1, 1, 1, 1, world_size()});
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch, "used with a process grid",
      [&] { HaloExchange<float, DeviceSpace> h(other, layout); });
  HaloExchange<float, DeviceSpace> moved = std::move(halo);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "after it was moved from", [&] { halo.start(x); });
  moved.exchange(x);
  // One node (as the test scripts run it): more ranks than GPUs share one.
  if (world_size() > DeviceSpace::device_count()) {
    HaloSetupOptions nccl;
    nccl.transport = HaloTransport::kNccl;
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kUnsupported, "needs one GPU per rank",
        [&] { HaloExchange<float, DeviceSpace> h(grid, layout, nccl); });
  }
}

// Checked before any device work, so this runs on every machine.
TEST(DeviceHaloChecks, RanksDisagreeingOnTheTransportFailTogether) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks to disagree";
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{1, 1, 2 * world_size(), 3}, grid.shape()),
      HaloWidths::symmetric({0, 0, 1, 1}));
  HaloSetupOptions config;
  config.transport =
      world_rank() == 0 ? HaloTransport::kNccl : HaloTransport::kHostStaged;
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kGridMismatch,
      "ranks disagree on the halo exchange: halo transport",
      [&] { HaloExchange<float, DeviceSpace> h(grid, layout, config); });
}

// A transport for host memory cannot move device memory (checked before
// any device work).
TEST(DeviceHaloChecks, HostTransportsRefuseDeviceMemory) {
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{1, 1, 2 * world_size(), 3}, grid.shape()),
      HaloWidths::symmetric({0, 0, 1, 1}));
  for (HaloTransport t :
       {HaloTransport::kSharedMemory, HaloTransport::kPackedBuffers,
        HaloTransport::kMpiDatatypes}) {
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kInvalidArgument,
        "does not move device memory",
        [&] { HaloExchange<float, DeviceSpace> h(grid, layout, {t}); });
  }
}

// Where there is no GPU, construction says so on every rank, no crash.
TEST(DeviceHaloChecks, WithoutAGpuConstructionFailsOnEveryRank) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU";
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  const HaloLayout layout(
      Distribution(Shape{1, 1, 2 * world_size(), 3}, grid.shape()),
      HaloWidths::symmetric({0, 0, 1, 1}));
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kUnsupported, "needs a CUDA device",
      [&] { HaloExchange<float, DeviceSpace> h(grid, layout); });
}

}  // namespace
}  // namespace distconv
