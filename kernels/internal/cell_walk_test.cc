// The cell and row walks over strided views and the per-channel bias loops
// built on them, on views padded inside larger buffers in both storage
// orders: every cell visited once in row-major order, and add_per_channel
// and sum_per_channel against element-at-a-time loops.
#include "kernels/internal/cell_walk.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "distconv/element_types.h"
#include "kernels/view_testing.h"

namespace distconv::internal {
namespace {

// Channel counts within and past kRowSumChannels (70).
const Shape kShapes[] = {Shape{2, 3, 4, 5}, Shape{1, 5, 2, 3, 70},
                         Shape{3, 1, 1, 1}, Shape{2, 4, 0, 3},
                         Shape{2, 70, 3, 2}};
const StorageOrder kOrders[] = {StorageOrder::kChannelsLast,
                                StorageOrder::kChannelsFirst};

TEST(CellWalk, VisitsEveryCellOnceInRowMajorOrder) {
  for (StorageOrder order : kOrders) {
    for (const Shape& shape : kShapes) {
      SCOPED_TRACE(::testing::Message() << shape);
      testing::Padded<int> v(shape, 1, order, -1);
      // Each cell's channel 0 numbered in row-major order of (n, spatial).
      std::vector<Index> want;
      int next = 0;
      v.view.for_each([&](const Shape& at, int& e) {
        if (at[1] != 0) return;
        e = next++;
        want.push_back(e);
      });
      std::vector<Index> cells, rows;
      for_each_cell<1>(shape, {v.view.strides()},
                       [&](Index n, const std::array<Index, 1>& at) {
                         const int e = v.view.data()[at[0]];
                         cells.push_back(e);
                         EXPECT_EQ(n, e / (shape.volume() / shape[1] /
                                           std::max<Index>(1, shape[0])));
                       });
      EXPECT_EQ(cells, want);
      const int last = shape.ndims() - 1;
      for_each_row<1>(
          shape, {v.view.strides()},
          [&](Index, const std::array<Index, 1>& at) {
            for (Index j = 0; j < shape[last]; ++j) {
              rows.push_back(v.view.data()[at[0] + j * v.view.strides()[last]]);
            }
          });
      EXPECT_EQ(rows, want);
    }
  }
}

template <typename T>
class PerChannelTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, bf16, fp16>;
TYPED_TEST_SUITE(PerChannelTest, Types);

TYPED_TEST(PerChannelTest, AddAndSumMatchElementLoops) {
  using T = TypeParam;
  using P = Compute<T>;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> small(-8, 8);  // exact in every type
  for (StorageOrder order : kOrders) {
    for (const Shape& shape : kShapes) {
      SCOPED_TRACE(::testing::Message() << shape);
      testing::Padded<T> v(shape, 1, order, T(-99.0f));
      v.view.for_each([&](const Shape&, T& e) { e = T(float(small(rng))); });
      std::vector<P> bias(shape[1]);
      for (P& b : bias) b = P(small(rng));
      // Element at a time.
      std::vector<T> want;
      std::vector<P> want_sums(shape[1], P(1));
      v.view.for_each([&](const Shape& at, T& e) {
        want.push_back(T(e + bias[at[1]]));
        want_sums[at[1]] += P(float(e));
      });
      std::vector<P> sums(shape[1], P(1));
      sum_per_channel(StridedView<const T>(v.view), sums.data());
      EXPECT_EQ(sums, want_sums);  // small integers: exact in any order
      add_per_channel(v.view, bias.data());
      std::vector<T> got;
      v.view.for_each([&](const Shape&, T& e) { got.push_back(e); });
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(float(got[i]), float(want[i])) << "at " << i;
      }
      // Nothing outside the view touched: the padding keeps its value.
      Index padding = 0;
      for (size_t i = 0; i < v.buffer.size(); ++i) {
        if (float(v.buffer[i]) == -99.0f) ++padding;
      }
      EXPECT_EQ(padding, Index(v.buffer.size()) - shape.volume());
    }
  }
}

}  // namespace
}  // namespace distconv::internal
