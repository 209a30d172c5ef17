// Test helpers for the layers in GPU memory (GPU builds only): a fixture
// that skips, visibly, without a GPU and gives each rank a device; host
// tensors copied to device tensors of the same layout; device tensors'
// interiors and whole buffers compared with the host layer's, bit for bit
// or within a tolerance (arrays with tests/expect_close.h, included); the
// passes of the layers with weights compared; a stream of the test's own;
// the grids splitting one dimension.
//
//   class DevicePooling : public testing::DeviceLayerTest {};
//   DistTensor<float, DeviceSpace> xd = testing::to_device(grid, x);
//   ...
//   testing::expect_same_interior(y, yd, 1e-5, "forward");
#ifndef DISTCONV_LAYERS_DEVICE_LAYER_TESTING_H_
#define DISTCONV_LAYERS_DEVICE_LAYER_TESTING_H_

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "tests/device_array.h"
#include "tests/expect_close.h"
#include "tests/mpi_testing.h"

namespace distconv::testing {

// How close a GPU layer's results must come to the host layer's where
// their arithmetic differs: fp32 to 1e-5, fp64 to 1e-10, bf16 to 1e-2 and
// fp16 to 2e-3 (one rounding of results that differ in their last bits
// before it: 2^-8 and 2^-11 relative, with room).
template <typename T>
constexpr double kTolerance = std::is_same_v<T, bf16>   ? 1e-2
                              : std::is_same_v<T, fp16> ? 2e-3
                              : sizeof(T) == 4          ? 1e-5
                                                        : 1e-10;

// The bound on |got - want| for a cell: tol * (1 + |want|), relative to
// |want| alone down to 1e-3 for bf16 and fp16 (whose tolerance spans one
// rounding step of the value itself, so small values keep a tight bound).
template <typename T>
double allowed(double tol, double want) {
  return tol * ((kNarrow<T> ? 1e-3 : 1.0) + std::abs(want));
}

class DeviceLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DeviceSpace::device_count() == 0) {
      GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
    }
    ASSERT_NO_THROW(DeviceSpace::use_device_of_rank(world_rank()));
  }
};

template <typename T>
std::vector<T> to_host(const T* device, Index n) {
  std::vector<T> out(n);
  DeviceSpace::copy_to_host(out.data(), device, sizeof(T) * n);
  return out;
}

// A device tensor of `host`'s layout holding its whole buffer.
template <typename T>
DistTensor<T, DeviceSpace> to_device(const ProcessGrid& grid,
                                     const DistTensor<T>& host) {
  DistTensor<T, DeviceSpace> out(grid, host.layout());
  DeviceSpace::copy_to_device(out.data(), host.data(), sizeof(T) * host.size());
  return out;
}

// The interiors of a host tensor and of a device tensor of the same
// layout, compared cell by cell.
template <typename T>
void expect_same_interior(DistTensor<T>& want, DistTensor<T, DeviceSpace>& got,
                          double tol, const char* what) {
  std::vector<T> buffer = to_host(got.data(), got.size());
  DistTensor<T> copy =
      DistTensor<T>::wrap(got.grid(), got.layout(), buffer.data(),
                          static_cast<Index>(buffer.size()));
  StridedView<T> g = copy.interior(), w = want.interior();
  std::vector<T> gv, wv;
  g.for_each([&](const Shape&, T& v) { gv.push_back(v); });
  w.for_each([&](const Shape&, T& v) { wv.push_back(v); });
  ASSERT_EQ(gv.size(), wv.size());
  for (size_t i = 0; i < gv.size(); ++i) {
    ASSERT_NEAR(gv[i], wv[i], allowed<T>(tol, wv[i]))
        << what << " at interior cell " << i << " of rank " << world_rank();
  }
}

// Whole buffers (halos included) equal bit for bit, but for NaNs, which
// need only both be NaN (a GPU's arithmetic does not keep NaN payloads).
template <typename T>
void expect_same_buffer(const DistTensor<T>& want,
                        const DistTensor<T, DeviceSpace>& got,
                        const char* what) {
  const std::vector<T> g = to_host(got.data(), got.size());
  ASSERT_EQ(static_cast<Index>(g.size()), want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(want.data()[i])) continue;
    ASSERT_EQ(std::memcmp(&g[i], want.data() + i, sizeof(T)), 0)
        << what << " at buffer cell " << i << " of rank " << world_rank()
        << ": " << g[i] << " vs " << want.data()[i];
  }
}

// Whole buffers (halos included) within allowed<T>(tol, want) per cell: for
// layers whose GPU math rounds differently (exp, log); halo cells, which
// both leave alone, must still match.
template <typename T>
void expect_close_buffer(const DistTensor<T>& want,
                         const DistTensor<T, DeviceSpace>& got, double tol,
                         const char* what) {
  const std::vector<T> g = to_host(got.data(), got.size());
  ASSERT_EQ(static_cast<Index>(g.size()), want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.data()[i];
    ASSERT_NEAR(g[i], w, allowed<T>(tol, w))
        << what << " at buffer cell " << i << " of rank " << world_rank();
  }
}

// A CUDA stream of the test's own (non-blocking: it does not wait for the
// legacy default stream), destroyed with the object.
class DeviceStream {
 public:
  DeviceStream() {
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
              cudaSuccess);
  }
  ~DeviceStream() { EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess); }
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const {
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  }

 private:
  cudaStream_t stream_ = nullptr;
};

// The passes of a host layer and a device layer with the same plan that
// take weight and bias arrays (Convolution, Deconvolution), on the same
// random input and output gradient: forward, backward-weights (the
// gradients summed over the ranks) and backward-data, compared within tol.
// w and b are the host arrays (b empty without a bias), of Compute<T>.
template <typename T, typename HostLayer, typename DeviceLayer>
void expect_same_weighted_passes(const ProcessGrid& grid, HostLayer& host,
                                 DeviceLayer& dev,
                                 const std::vector<Compute<T>>& w,
                                 const std::vector<Compute<T>>& b,
                                 std::mt19937_64& rng, double tol) {
  using P = Compute<T>;
  std::uniform_real_distribution<double> val(-1, 1);
  DistTensor<T> x(grid, host.src_layout()), y(grid, host.dst_layout());
  DistTensor<T> dy(grid, host.diff_dst_layout()),
      dx(grid, host.diff_src_layout());
  x.interior().for_each([&](const Shape&, T& v) { v = val(rng); });
  dy.interior().for_each([&](const Shape&, T& v) { v = val(rng); });
  const bool has_bias = !b.empty();
  DistTensor<T, DeviceSpace> xd(grid, dev.src_layout()),
      yd(grid, dev.dst_layout()), dyd(grid, dev.diff_dst_layout()),
      dxd(grid, dev.diff_src_layout());
  DeviceSpace::copy_to_device(xd.data(), x.data(), sizeof(T) * x.size());
  DeviceSpace::copy_to_device(dyd.data(), dy.data(), sizeof(T) * dy.size());
  DeviceArray<P> wd(w), bd(b);
  // The gradients are added to what is there: 0.5, small enough that the
  // relative tolerance of a bf16 gradient stays tight.
  std::vector<P> dw(w.size(), P(0.5)), db(b.size(), P(0.5));
  DeviceArray<P> dwd(dw), dbd(db);

  host.forward(x, w.data(), has_bias ? b.data() : nullptr, y);
  dev.forward(xd, wd.data, has_bias ? bd.data : nullptr, yd);
  host.backward_weights(x, dy, dw.data(), has_bias ? db.data() : nullptr);
  dev.backward_weights(xd, dyd, dwd.data, has_bias ? dbd.data : nullptr);
  host.backward_data(dy, w.data(), dx);
  dev.backward_data(dyd, wd.data, dxd);
  host.wait_gradients();
  dev.wait_gradients();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_same_interior(y, yd, tol, "forward");
  expect_same_interior(dx, dxd, tol, "backward data");
  expect_close(dwd.read(), dw, tol, "weight gradient");
  if (has_bias) expect_close(dbd.read(), db, tol, "bias gradient");
}

// The grids of world_size() ranks over (N, C, H, W) or (N, C, D, H, W)
// that split one dimension: N, C, then each spatial one.
inline std::vector<Shape> one_split_grids(int ndims) {
  std::vector<Shape> out;
  for (int d = 0; d < ndims; ++d) {
    Shape g = Shape::filled(ndims, 1);
    g[d] = world_size();
    out.push_back(g);
  }
  return out;
}

// one_split_grids() but those splitting channels (on several ranks).
inline std::vector<Shape> sample_or_space_grids(int ndims) {
  std::vector<Shape> out;
  for (const Shape& g : one_split_grids(ndims)) {
    if (g[1] == 1) out.push_back(g);
  }
  return out;
}

}  // namespace distconv::testing

#endif  // DISTCONV_LAYERS_DEVICE_LAYER_TESTING_H_
