// The host's primitives of kernels/space_ops.h against element-at-a-time
// loops, for every element type (zero and copy for the label types too):
// views embedded in halos in either storage order, nothing outside the
// destination view touched, sums in place (dst either source), views of
// different extents refused.
#include "kernels/space_ops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

// Values exact in every element type (small integers), a different
// pattern per `seed`.
template <typename T>
void fill_indices(const StridedView<T>& v, int seed) {
  v.for_each([&](const Shape& i, T& x) {
    x = T(float((linear_index(i, v.extent()) * (2 * seed + 1) + seed) % 61));
  });
}

// Every cell of the buffer outside the view is still `outside`.
template <typename T>
void expect_outside_untouched(const testing::Padded<T>& p, T outside) {
  std::vector<T> rest = p.buffer;
  p.view.for_each(
      [&](const Shape&, T& v) { rest[&v - p.buffer.data()] = outside; });
  for (const T& v : rest) EXPECT_EQ(v, outside);
}

std::string order_name(StorageOrder o) {
  return o == StorageOrder::kChannelsLast ? "channels-last" : "channels-first";
}

TYPED_TEST(SpaceOps, ZeroCopyAndSumMatchElementLoops) {
  using T = TypeParam;
  const Exec<HostSpace> exec;
  const T outside = T(-7);
  for (const Shape& extent : kExtents) {
    for (StorageOrder from : kOrders) {
      for (StorageOrder to : kOrders) {
        SCOPED_TRACE(extent.to_string() + " from " + order_name(from) + " to " +
                     order_name(to));
        testing::Padded<T> a(extent, 1, from, outside);
        testing::Padded<T> b(extent, 0, to, outside);
        fill_indices(a.view, 1);
        fill_indices(b.view, 2);
        testing::Padded<T> y(extent, 2, to, outside);
        copy<T>(exec, a.view, y.view);
        y.view.for_each([&](const Shape& i, T& v) { EXPECT_EQ(v, a.view(i)); });
        expect_outside_untouched(y, outside);
        sum<T>(exec, y.view, a.view, b.view);
        y.view.for_each([&](const Shape& i, T& v) {
          EXPECT_EQ(v, T(float(a.view(i)) + float(b.view(i))));
        });
        expect_outside_untouched(y, outside);
        // In place, dst the first source, then the second.
        testing::Padded<T> c(extent, 1, to, outside);
        copy<T>(exec, a.view, c.view);
        sum<T>(exec, c.view, c.view, b.view);
        c.view.for_each([&](const Shape& i, T& v) { EXPECT_EQ(v, y.view(i)); });
        copy<T>(exec, b.view, c.view);
        sum<T>(exec, c.view, a.view, c.view);
        c.view.for_each([&](const Shape& i, T& v) { EXPECT_EQ(v, y.view(i)); });
        expect_outside_untouched(c, outside);
        zero<T>(exec, y.view);
        y.view.for_each([&](const Shape&, T& v) { EXPECT_EQ(v, T(0)); });
        expect_outside_untouched(y, outside);
      }
    }
  }
}

TYPED_TEST(SpaceOps, PerChannelFillAddAndSumMatchElementLoops) {
  using T = TypeParam;
  using P = Compute<T>;
  const Exec<HostSpace> exec;
  const T outside = T(-7);
  for (const Shape& extent : kExtents) {
    for (StorageOrder order : kOrders) {
      SCOPED_TRACE(extent.to_string() + " " + order_name(order));
      const Index channels = extent[1];
      std::vector<P> values(channels);
      for (Index c = 0; c < channels; ++c) values[c] = P(3 * c - 5);
      testing::Padded<T> y(extent, 1, order, outside);
      fill_indices(y.view, 3);
      fill_per_channel<T>(exec, y.view, nullptr);
      y.view.for_each([&](const Shape&, T& v) { EXPECT_EQ(v, T(0)); });
      fill_per_channel<T>(exec, y.view, values.data());
      y.view.for_each(
          [&](const Shape& i, T& v) { EXPECT_EQ(v, T(values[i[1]])); });
      expect_outside_untouched(y, outside);
      fill_indices(y.view, 4);
      testing::Padded<T> before(extent, 0, order, outside);
      copy<T>(exec, StridedView<const T>(y.view), before.view);
      add_per_channel<T>(exec, y.view, values.data());
      y.view.for_each([&](const Shape& i, T& v) {
        EXPECT_EQ(v, T(float(before.view(i)) + float(values[i[1]])));
      });
      expect_outside_untouched(y, outside);
      // The sums add to what the array held.
      std::vector<P> sums(channels, P(1)), want(channels, P(1));
      y.view.for_each([&](const Shape& i, T& v) { want[i[1]] += P(v); });
      sum_per_channel<T>(exec, StridedView<const T>(y.view), sums.data());
      for (Index c = 0; c < channels; ++c) EXPECT_EQ(sums[c], want[c]);
    }
  }
}

// zero and copy serve the label types too (class labels moved between
// distributions).
#define SPACE_OPS_TEST_LABEL(T) , T
using LabelTypes =
    GtestTypes<internal::ListAfterVoid<void DISTCONV_FOR_EACH_LABEL_TYPE(
        SPACE_OPS_TEST_LABEL)>::type>;
#undef SPACE_OPS_TEST_LABEL

template <typename L>
class SpaceOpsLabels : public ::testing::Test {};
TYPED_TEST_SUITE(SpaceOpsLabels, LabelTypes);

TYPED_TEST(SpaceOpsLabels, ZeroAndCopyMatchElementLoops) {
  using L = TypeParam;
  const Exec<HostSpace> exec;
  const L outside = L(99);
  for (const Shape& extent : kExtents) {
    for (StorageOrder order : kOrders) {
      SCOPED_TRACE(extent.to_string() + " " + order_name(order));
      testing::Padded<L> a(extent, 1, order, outside);
      a.view.for_each(
          [&](const Shape& i, L& v) { v = L(linear_index(i, extent) % 13); });
      testing::Padded<L> y(extent, 2, kOrders[0], outside);
      copy<L>(exec, a.view, y.view);
      y.view.for_each([&](const Shape& i, L& v) { EXPECT_EQ(v, a.view(i)); });
      zero<L>(exec, y.view);
      y.view.for_each([&](const Shape&, L& v) { EXPECT_EQ(v, L(0)); });
      expect_outside_untouched(y, outside);
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
