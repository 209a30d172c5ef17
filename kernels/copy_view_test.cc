// copy_view against an element-at-a-time copy: every pair of types it is
// defined for, views embedded in halos in either storage order (runs of
// every length, unit and non-unit strides; short channel runs of the
// sizes copied as known sizes), nothing outside the
// destination view touched; views of different extents refused.
#include "kernels/copy_view.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "kernels/view_testing.h"

namespace distconv {
namespace {

// Copies every (extent, padding, order) case from From to To and checks
// each element against To(From) and the cells around the destination.
template <typename From, typename To>
void expect_copies() {
  const StorageOrder last = StorageOrder::kChannelsLast;
  const StorageOrder first = StorageOrder::kChannelsFirst;
  const To outside = To(-7);
  for (const Shape& extent :
       {Shape{2, 3, 4, 5}, Shape{1, 1, 1, 1}, Shape{2, 17, 3, 1, 2},
        Shape{3, 2, 0, 4}, Shape{1, 40, 6}, Shape{2, 16, 3, 2},
        Shape{1, 64, 2, 3}}) {  // 16 and 64 channels: runs of 16-256 bytes
    for (Index pad_from : {0, 1}) {
      for (Index pad_to : {0, 2}) {
        for (StorageOrder order_from : {last, first}) {
          for (StorageOrder order_to : {last, first}) {
            SCOPED_TRACE(extent.to_string() + " pads " +
                         std::to_string(pad_from) + "/" +
                         std::to_string(pad_to));
            testing::Padded<From> x(extent, pad_from, order_from, From(-1));
            testing::Padded<To> y(extent, pad_to, order_to, outside);
            x.view.for_each([&](const Shape& i, From& v) {
              // Small integers, halves and values that round in 16 bits.
              const Index k = linear_index(i, extent);
              v = From(float(k % 101) * (k % 2 ? 0.5f : 1.0f) +
                       (k % 3 ? 0.0f : 0.001f));
            });
            copy_view<From, To>(x.view, y.view);
            Index inside = 0;
            y.view.for_each([&](const Shape& i, To& v) {
              const From a = x.view(i);
              EXPECT_EQ(v, To(a)) << i;
              v = outside;
              ++inside;
            });
            EXPECT_EQ(inside, extent.volume());
            for (const To& v : y.buffer) EXPECT_EQ(v, outside);
          }
        }
      }
    }
  }
}

TEST(CopyView, EachTypeToItself) {
  expect_copies<float, float>();
  expect_copies<double, double>();
  expect_copies<bf16, bf16>();
  expect_copies<fp16, fp16>();
  expect_copies<std::int32_t, std::int32_t>();
  expect_copies<std::int64_t, std::int64_t>();
  expect_copies<std::uint8_t, std::uint8_t>();
}

TEST(CopyView, NarrowTypesToAndFromFloat) {
  expect_copies<bf16, float>();
  expect_copies<fp16, float>();
  expect_copies<float, bf16>();
  expect_copies<float, fp16>();
}

TEST(CopyView, ViewsOfDifferentExtentsAreRefused) {
  std::vector<float> a(24, 1.0f), b(24, 2.0f);
  const auto from =
      StridedView<const float>::contiguous(a.data(), {1, 2, 3, 4});
  const auto to = StridedView<float>::contiguous(b.data(), {1, 2, 4, 3});
  try {
    copy_view<float>(from, to);
    FAIL() << "expected kShapeMismatch";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch) << e.what();
  }
  for (float v : b) EXPECT_EQ(v, 2.0f);  // nothing written
}

}  // namespace
}  // namespace distconv
