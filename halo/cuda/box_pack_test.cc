// The GPU pack kernels against the host's packing (internal::box_copy.h),
// bit for bit, for every element type: halo-plan boxes and random ones,
// copy/sum/max, vectorised and unaligned pointers. Skips, visibly, on a
// machine without a GPU.
#include "halo/cuda/box_pack.h"

#include <cstring>
#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/internal/box_copy.h"
#include "gtest/gtest.h"
#include "halo/cuda/box_testing.h"
#include "tests/device_array.h"

namespace distconv {
namespace {

using testing::DeviceArray;

template <typename T>
class BoxPack : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DeviceSpace::device_count() == 0) {
      GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
    }
  }
};

using ElementTypes =
    ::testing::Types<float, double, __half, __nv_bfloat16, bf16, fp16>;
TYPED_TEST_SUITE(BoxPack, ElementTypes);

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
std::vector<T> random_values(std::mt19937_64& rng, std::int64_t n) {
  std::uniform_int_distribution<int> v(-64, 64);
  std::vector<T> out;
  for (std::int64_t i = 0; i < n; ++i) {
    out.push_back(static_cast<T>(static_cast<float>(v(rng)) / 8.0f));
  }
  return out;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(T) * a.size()) == 0;
}

// Packs and unpacks (copy, sum, max) `boxes` on the device and on the host.
template <typename T>
void ExpectLikeTheHost(const Shape& extent, const std::vector<Box>& boxes,
                       std::mt19937_64& rng) {
  const std::vector<T> array = random_values<T>(rng, extent.volume());
  const DeviceBoxCopy<T> copy(extent, boxes);
  std::vector<T> want_packed;
  for (const Box& b : boxes) {
    std::vector<T> one(b.volume());
    internal::pack_box(array.data(), extent, b, one.data());
    want_packed.insert(want_packed.end(), one.begin(), one.end());
  }
  ASSERT_EQ(copy.packed_volume(), static_cast<std::int64_t>(want_packed.size()));
  const std::vector<T> incoming = random_values<T>(rng, want_packed.size());
  for (int offset : {0, 1}) {
    SCOPED_TRACE("pointer offset " + std::to_string(offset));
    DeviceArray<T> a(array, offset);
    DeviceArray<T> packed(std::vector<T>(want_packed.size()), offset);
    copy.pack(a.data, packed.data, nullptr);
    EXPECT_TRUE(same_bits(packed.read(), want_packed)) << "pack";
    for (BoxCombine c : {BoxCombine::kCopy, BoxCombine::kSum,
                         BoxCombine::kMax}) {
      std::vector<T> want = array;
      const T* in = incoming.data();
      for (const Box& b : boxes) {
        in = internal::combine_box(in, extent, b, want.data(), [&](T x, T y) {
          if (c == BoxCombine::kCopy) return y;
          const Acc<T> ax = static_cast<Acc<T>>(x), ay = static_cast<Acc<T>>(y);
          if (c == BoxCombine::kSum) return static_cast<T>(ax + ay);
          return ax < ay ? y : x;
        });
      }
      DeviceArray<T> target(array, offset);
      DeviceArray<T> from(incoming, offset);
      copy.unpack(from.data, target.data, c, nullptr);
      EXPECT_TRUE(same_bits(target.read(), want))
          << "unpack " << static_cast<int>(c);
    }
  }
}

TYPED_TEST(BoxPack, HaloPlanBoxes) {
  std::mt19937_64 rng(3);
  testing::for_each_halo_box_list(
      {Shape{1, 1, 2, 2}, Shape{1, 1, 2, 1, 2}}, 1,
      [&](const std::string& name, const Shape& extent,
          const std::vector<Box>& boxes) {
        SCOPED_TRACE(name);
        ExpectLikeTheHost<TypeParam>(extent, boxes, rng);
      });
}

// Overlapping boxes: accumulation must keep each cell's order.
TYPED_TEST(BoxPack, RandomOverlappingBoxes) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 2);
    const Shape extent = testing::random_extent(rng, n, 9);
    ExpectLikeTheHost<TypeParam>(extent, testing::random_boxes(rng, extent, 5),
                                 rng);
  }
}

// Large slabs: many blocks per segment. H-slabs alone move 16-byte units
// for every type; with the W-slabs (rows of 2) the units shrink.
TYPED_TEST(BoxPack, LargeSlabs) {
  std::mt19937_64 rng(9);
  const Shape extent{2, 16, 130, 132};
  const std::vector<Box> h_slabs{Box{{0, 0, 0, 0}, {2, 16, 2, 132}},
                                 Box{{0, 0, 128, 0}, {2, 16, 2, 132}}};
  EXPECT_EQ(DeviceBoxCopy<TypeParam>(extent, h_slabs).width(),
            static_cast<int>(16 / sizeof(TypeParam)));
  ExpectLikeTheHost<TypeParam>(extent, h_slabs, rng);
  ExpectLikeTheHost<TypeParam>(
      extent,
      {Box{{0, 0, 0, 0}, {2, 16, 2, 132}}, Box{{0, 0, 128, 0}, {2, 16, 2, 132}},
       Box{{0, 0, 0, 0}, {2, 16, 130, 2}}, Box{{0, 0, 0, 130}, {2, 16, 130, 2}}},
      rng);
}

}  // namespace
}  // namespace distconv
