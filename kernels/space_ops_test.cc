// The host's primitives of kernels/space_ops.h against element-at-a-time
// loops, for every element type: views embedded in halos in either storage
// order, nothing outside the destination view touched, a sum in place
// (dst the first source), views of different extents refused.
#include "kernels/space_ops.h"

#include <gtest/gtest.h>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "kernels/view_testing.h"
#include "tests/gtest_types.h"

namespace distconv {
namespace {

template <typename T>
class SpaceOps : public ::testing::Test {};
TYPED_TEST_SUITE(SpaceOps, GtestTypes<ElementTypeList>);

const Shape kExtents[] = {Shape{2, 3, 4, 5}, Shape{1, 17, 3, 1, 2},
                          Shape{3, 2, 0, 4}};
constexpr StorageOrder kOrders[] = {StorageOrder::kChannelsLast,
                                    StorageOrder::kChannelsFirst};

// Values exact in every element type.
template <typename T>
void fill_indices(const StridedView<T>& v, int scale) {
  v.for_each([&](const Shape& i, T& x) {
    x = T(float(linear_index(i, v.extent()) % 64) * float(scale));
  });
}

template <typename T>
void expect_outside_untouched(const testing::Padded<T>& p, T outside) {
  p.view.for_each([&](const Shape&, T& v) { v = outside; });
  for (const T& v : p.buffer) EXPECT_EQ(v, outside);
}

TYPED_TEST(SpaceOps, ZeroCopyAndSumMatchElementLoops) {
  using T = TypeParam;
  const Exec<HostSpace> exec;
  const T outside = T(-7);
  for (const Shape& extent : kExtents) {
    for (StorageOrder from : kOrders) {
      for (StorageOrder to : kOrders) {
        SCOPED_TRACE(extent.to_string());
        testing::Padded<T> a(extent, 1, from, T(-1)), b(extent, 0, to, T(-1));
        fill_indices(a.view, 1);
        fill_indices(b.view, 2);
        testing::Padded<T> y(extent, 2, to, outside);
        copy<T>(exec, a.view, y.view);
        y.view.for_each([&](const Shape& i, T& v) { EXPECT_EQ(v, a.view(i)); });
        sum<T>(exec, y.view, a.view, b.view);
        y.view.for_each([&](const Shape& i, T& v) {
          EXPECT_EQ(v, T(float(a.view(i)) + float(b.view(i))));
        });
        sum<T>(exec, a.view, a.view, b.view);  // in place
        a.view.for_each([&](const Shape& i, T& v) { EXPECT_EQ(v, y.view(i)); });
        zero<T>(exec, y.view);
        y.view.for_each([&](const Shape&, T& v) { EXPECT_EQ(v, T(0)); });
        expect_outside_untouched(y, outside);
      }
    }
  }
}

TYPED_TEST(SpaceOps, ViewsOfDifferentExtentsAreRefused) {
  using T = TypeParam;
  const Exec<HostSpace> exec;
  testing::Padded<T> a(Shape{1, 2, 3, 4}, 0, StorageOrder::kChannelsLast, T(1));
  testing::Padded<T> b(Shape{1, 2, 3, 5}, 0, StorageOrder::kChannelsLast, T(2));
  const auto refused = [](auto&& op) {
    try {
      op();
    } catch (const Error& e) {
      return e.kind() == ErrorKind::kShapeMismatch;
    }
    return false;
  };
  EXPECT_TRUE(refused([&] { copy<T>(exec, a.view, b.view); }));
  EXPECT_TRUE(refused([&] { sum<T>(exec, b.view, a.view, b.view); }));
  EXPECT_TRUE(refused([&] { sum<T>(exec, a.view, a.view, b.view); }));
  for (const T& v : b.buffer) EXPECT_EQ(v, T(2));
}

}  // namespace
}  // namespace distconv
