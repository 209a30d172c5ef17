// Test helpers for the layers in GPU memory (GPU builds only): a fixture
// that skips, visibly, without a GPU and gives each rank a device; host
// tensors copied to device tensors of the same layout; device tensors'
// interiors and whole buffers compared with the host layer's, bit for bit
// or within a tolerance (arrays with tests/expect_close.h, included); the
// grids splitting one dimension.
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
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "tests/expect_close.h"
#include "tests/mpi_testing.h"

namespace distconv::testing {

class DeviceLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DeviceSpace::device_count() == 0) {
      GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
    }
    ASSERT_EQ(cudaSetDevice(world_rank() % DeviceSpace::device_count()),
              cudaSuccess);
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
    ASSERT_NEAR(gv[i], wv[i], tol * (1 + std::abs(wv[i])))
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

// Whole buffers (halos included) within tol * (1 + |want|) per cell: for
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
    ASSERT_NEAR(g[i], w, tol * (1 + std::abs(w)))
        << what << " at buffer cell " << i << " of rank " << world_rank();
  }
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

}  // namespace distconv::testing

#endif  // DISTCONV_LAYERS_DEVICE_LAYER_TESTING_H_
