// The run decomposition behind the host element-wise loops: every index of the
// extent visited once, whatever the views' strides (dense, embedded in
// halos, either storage order, mixed), nothing outside the views touched.
#include "kernels/internal/strided_runs.h"

#include <gtest/gtest.h>

#include <vector>

#include "distconv/halo_layout.h"
#include "kernels/view_testing.h"

namespace distconv::internal {
namespace {

TEST(StridedRuns, TransformVisitsEveryIndexOnceWhateverTheStrides) {
  const StorageOrder last = StorageOrder::kChannelsLast;
  const StorageOrder first = StorageOrder::kChannelsFirst;
  for (const Shape& extent :
       {Shape{2, 3, 4, 5}, Shape{1, 1, 1, 1}, Shape{2, 4, 3, 1, 2},
        Shape{3, 2, 0, 4}, Shape{1, 5, 6}}) {
    for (Index pad_x : {0, 1}) {
      for (Index pad_y : {0, 2}) {
        for (StorageOrder ox : {last, first}) {
          for (StorageOrder oy : {last, first}) {
            SCOPED_TRACE(extent.to_string() + " pads " + std::to_string(pad_x) +
                         "/" + std::to_string(pad_y));
            testing::Padded<double> x(extent, pad_x, ox, -1),
                y(extent, pad_y, oy, -2);
            x.view.for_each([&](const Shape& i, double& v) {
              v = double(linear_index(i, extent));
            });
            transform([](double a, double b) { return 2 * a + b; }, y.view,
                      StridedView<const double>(x.view),
                      StridedView<const double>(x.view));
            // Interior: 3 * index; every other buffer cell untouched.
            Index inside = 0;
            y.view.for_each([&](const Shape& i, double& v) {
              EXPECT_EQ(v, 3.0 * double(linear_index(i, extent))) << i;
              v = -2;
              ++inside;
            });
            EXPECT_EQ(inside, extent.volume());
            for (double v : y.buffer) EXPECT_EQ(v, -2);
          }
        }
      }
    }
  }
}

TEST(StridedRuns, InPlaceAndZero) {
  testing::Padded<double> x({2, 3, 4, 5}, 1, StorageOrder::kChannelsLast, 7);
  transform([](double a) { return a * a; }, x.view,
            StridedView<const double>(x.view));
  x.view.for_each([](const Shape&, double& v) { EXPECT_EQ(v, 49); });
  zero(x.view);
  Index zeros = 0;
  for (double v : x.buffer) zeros += v == 0;
  EXPECT_EQ(zeros, 2 * 3 * 4 * 5);
}

}  // namespace
}  // namespace distconv::internal
