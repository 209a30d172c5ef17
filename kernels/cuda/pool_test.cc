// CudaPool on the GPU against the reference loops (pool_testing.h: random
// problems on views inside larger channels-last and channels-first buffers,
// ties and NaNs, bit for bit in float and double, nothing outside the views
// written), queued on a stream of its own; views other than the planned
// ones refused. The GPU cases skip, visibly, on a machine without a GPU.
#include "kernels/cuda/pool.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "kernels/cuda/pool_testing.h"
#include "kernels/device_view_testing.h"

namespace distconv {
namespace {

using testing::DeviceView;
using testing::Embedded;

// Runs on a non-blocking stream of its own; copies the whole buffers back,
// so that cells outside the views are checked too.
struct OnTheDevice {
  cudaStream_t stream = nullptr;
  OnTheDevice() {
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              cudaSuccess);
  }
  ~OnTheDevice() { cudaStreamDestroy(stream); }

  template <typename T>
  void forward(const PoolDesc& p, Embedded<T>& x, Embedded<T>& y) {
    DeviceView<T> xd(x), yd(y);
    CudaPool<T> pool(p, x.view.extent(), x.view.strides(), y.view.extent(),
                     y.view.strides(), stream);
    EXPECT_EQ(pool.implementation(), "cuda direct");
    pool.forward(xd.view, yd.view);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const std::vector<T> back = yd.buffer.read();
    std::copy(back.begin(), back.end(), y.buffer.begin());
  }
  template <typename T>
  void backward(const PoolDesc& p, Embedded<T>& x, Embedded<T>& y,
                Embedded<T>& dx) {
    DeviceView<T> xd(x), dyd(y), dxd(dx);
    CudaPool<T> pool(p, x.view.extent(), x.view.strides(), y.view.extent(),
                     y.view.strides(), stream);
    pool.backward(xd.view, dyd.view, dxd.view);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const std::vector<T> back = dxd.buffer.read();
    std::copy(back.begin(), back.end(), dx.buffer.begin());
  }
};

class CudaPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DeviceSpace::device_count() == 0) {
      GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
    }
  }
};

TEST_F(CudaPoolTest, FloatMatchesTheReferenceBitForBit) {
  OnTheDevice run;
  testing::check_pool_against_reference<float>(run, 300);
}

TEST_F(CudaPoolTest, DoubleMatchesTheReferenceBitForBit) {
  OnTheDevice run;
  testing::check_pool_against_reference<double>(run, 300);
}

// Needs no device: the views are checked before anything is launched.
TEST(CudaPool, RefusesViewsItWasNotPlannedFor) {
  PoolDesc p = PoolDesc::make(PoolKind::kMax, {2, 2});
  const Shape src{1, 3, 8, 8}, dst{1, 3, 4, 4};
  const Shape xs = dense_strides(src, StorageOrder::kChannelsLast);
  const Shape ys = dense_strides(dst, StorageOrder::kChannelsLast);
  CudaPool<float> pool(p, src, xs, dst, ys, nullptr);
  const StridedView<float, DeviceSpace> x(nullptr, src, xs), y(nullptr, dst,
                                                                ys);
  const StridedView<float, DeviceSpace> y_nchw(
      nullptr, dst, dense_strides(dst, StorageOrder::kChannelsFirst));
  const StridedView<float, DeviceSpace> x_small(nullptr, Shape{1, 3, 6, 8},
                                                xs);
  auto expect_mismatch = [](auto call) {
    try {
      call();
      FAIL() << "other views were accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
      EXPECT_NE(std::string(e.what()).find("planned for"), std::string::npos)
          << e.what();
    }
  };
  expect_mismatch([&] { pool.forward(x, y_nchw); });
  expect_mismatch([&] { pool.forward(x_small, y); });
  expect_mismatch([&] { pool.backward(x, y, x_small); });
  expect_mismatch([&] { pool.backward(x, y_nchw, x); });
}

}  // namespace
}  // namespace distconv
