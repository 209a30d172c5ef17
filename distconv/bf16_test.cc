#include "distconv/bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace distconv {
namespace {

float next_up(float f) {
  return std::nextafter(f, std::numeric_limits<float>::infinity());
}

TEST(Bf16, EveryValueSurvivesARoundTrip) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const bf16 x = bf16::from_bits(static_cast<std::uint16_t>(b));
    const float f = x;
    const bf16 y = f;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(y))) << b;
    } else {
      EXPECT_EQ(y.bits(), b) << f;
    }
  }
}

TEST(Bf16, RoundsToNearestTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to even (1).
  EXPECT_EQ(static_cast<float>(bf16(1.0f + 0x1p-8f)), 1.0f);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to even.
  EXPECT_EQ(static_cast<float>(bf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  // Just past halfway goes up, just before it goes down.
  EXPECT_EQ(static_cast<float>(bf16(next_up(1.0f + 0x1p-8f))),
            1.0f + 0x1p-7f);
  EXPECT_EQ(static_cast<float>(bf16(std::nextafter(1.0f + 0x1p-8f, 0.0f))),
            1.0f);
  EXPECT_EQ(static_cast<float>(bf16(-1.1f)), -1.1015625f);
  EXPECT_EQ(static_cast<float>(bf16(1.1f)), 1.1015625f);
}

TEST(Bf16, RandomFloatsGoToTheNearestNeighbour) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (!std::isfinite(f)) continue;
    const float r = bf16(f);
    // The two bf16 values around f: truncated, and one step away from 0.
    const std::uint32_t lo_bits = u & 0xffff0000u;
    float lo, hi;
    std::memcpy(&lo, &lo_bits, sizeof lo);
    const std::uint32_t hi_bits = lo_bits + 0x10000u;
    std::memcpy(&hi, &hi_bits, sizeof hi);
    // Past the largest finite value, rounding goes on as if the exponent
    // were unbounded: the step up is 2^128, stored as infinity.
    const double hi_value =
        std::isinf(hi) ? std::copysign(0x1p128, double(f)) : double(hi);
    const double dlo = std::fabs(double(f) - lo);
    const double dhi = std::fabs(hi_value - f);
    if (dlo < dhi) {
      EXPECT_EQ(r, lo) << f;
    } else if (dhi < dlo) {
      EXPECT_EQ(r, hi) << f;
    } else {  // a tie: the one with an even last bit
      EXPECT_EQ(bf16(r).bits() & 1u, 0u) << f;
    }
  }
}

TEST(Bf16, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(static_cast<float>(bf16(inf)), inf);
  EXPECT_EQ(static_cast<float>(bf16(-inf)), -inf);
  EXPECT_TRUE(std::isnan(static_cast<float>(
      bf16(std::numeric_limits<float>::quiet_NaN()))));
  // A signalling NaN whose payload lies in the dropped bits stays NaN.
  const std::uint32_t snan_bits = 0x7f800001u;
  float snan;
  std::memcpy(&snan, &snan_bits, sizeof snan);
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16(snan))));
  EXPECT_EQ(bf16(-0.0f).bits(), 0x8000u);
  EXPECT_EQ(bf16{}.bits(), 0u);
  EXPECT_EQ(std::vector<bf16>(3)[2].bits(), 0u);
  // Past the largest finite bf16 (just under 2^128) rounds to infinity.
  EXPECT_EQ(static_cast<float>(bf16(std::numeric_limits<float>::max())), inf);
  // Subnormals are kept.
  EXPECT_EQ(static_cast<float>(bf16(0x1p-133f)), 0x1p-133f);
}

// The vectorised bulk conversions agree with the scalar ones bit for bit
// (NaNs, infinities, ties and subnormals included).
TEST(Bf16, BulkConversionsMatchTheScalarOnes) {
  std::vector<bf16> all(0x10000);
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    all[b] = bf16::from_bits(static_cast<std::uint16_t>(b));
  }
  std::vector<float> wide(all.size());
  convert(all.data(), all.size(), wide.data());
  std::vector<float> floats;
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    EXPECT_EQ(std::memcmp(&wide[b], &static_cast<const float&>(float(all[b])),
                          sizeof(float)),
              0);
    // Each value, the ties next to it, and its neighbours.
    for (std::uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const std::uint32_t u = (b << 16) | low;
      float f;
      std::memcpy(&f, &u, sizeof f);
      floats.push_back(f);
    }
  }
  std::vector<bf16> narrow(floats.size());
  convert(floats.data(), floats.size(), narrow.data());
  for (size_t i = 0; i < floats.size(); ++i) {
    ASSERT_EQ(narrow[i].bits(), bf16(floats[i]).bits()) << floats[i];
  }
}

TEST(Bf16, ArithmeticRunsInFloat) {
  bf16 x = 3.0f;
  x = x * 2.0f + 1.0f;
  EXPECT_EQ(static_cast<float>(x), 7.0f);
  EXPECT_TRUE(bf16(1.0f) < bf16(2.0f));
  static_assert(std::is_same_v<Compute<bf16>, float>);
  static_assert(std::is_same_v<Compute<float>, float>);
  static_assert(std::is_same_v<Compute<double>, double>);
}

}  // namespace
}  // namespace distconv
