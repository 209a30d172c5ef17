// fp16 against the compiler's own IEEE binary16 (_Float16, whose
// conversions round to nearest even in hardware or libgcc): every fp16
// value read, and floats around every fp16 value and every midpoint
// between two, plus random floats, rounded bit for bit alike.
#include "distconv/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace distconv {
namespace {

float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

#if defined(__FLT16_MAX__)
std::uint16_t oracle_bits(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  std::uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
float oracle_float(std::uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, sizeof h);
  return static_cast<float>(h);
}

// The same bits, or both NaN (payloads aside).
void ExpectSameRounding(float f) {
  const std::uint16_t got = fp16(f).bits(), want = oracle_bits(f);
  if (std::isnan(f)) {
    EXPECT_TRUE(std::isnan(static_cast<float>(fp16::from_bits(got)))) << f;
  } else {
    EXPECT_EQ(got, want) << std::hexfloat << f;
  }
}

TEST(Fp16, EveryValueWidensAsTheCompilersDoes) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float got = fp16::from_bits(bits), want = oracle_float(bits);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << b;
    } else {
      EXPECT_EQ(bits_of(got), bits_of(want)) << b;
    }
  }
}

// Each fp16 value, the midpoint to the next one up, and the floats one
// step either side of both: ties, near-ties, the subnormal range, the
// overflow threshold (65520) and beyond.
TEST(Fp16, RoundsAroundEveryValueAndMidpointAsTheCompilersDoes) {
  for (std::uint32_t b = 0; b < 0x7c00u; ++b) {
    for (const float sign : {1.0f, -1.0f}) {
      const float lo = fp16::from_bits(static_cast<std::uint16_t>(b));
      const float hi =
          b + 1 < 0x7c00u
              ? float(fp16::from_bits(static_cast<std::uint16_t>(b + 1)))
              : 65536.0f;               // where the step past 65504 ends
      const float mid = (lo + hi) / 2;  // exact: 11 bits in 24
      for (const float x : {lo, mid}) {
        const float v = sign * x;
        ExpectSameRounding(v);
        ExpectSameRounding(std::nextafter(v, 0.0f));
        ExpectSameRounding(
            std::nextafter(v, sign * std::numeric_limits<float>::infinity()));
      }
    }
  }
}

TEST(Fp16, RandomFloatsRoundAsTheCompilersDo) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 400000; ++i) ExpectSameRounding(float_of(bits(rng)));
}
#else
TEST(Fp16, CompilerOracle) {
  GTEST_SKIP() << "this compiler has no _Float16 to compare with";
}
#endif

TEST(Fp16, EveryValueSurvivesARoundTrip) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const fp16 x = fp16::from_bits(static_cast<std::uint16_t>(b));
    const float f = x;
    const fp16 y = f;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(y))) << b;
    } else {
      EXPECT_EQ(y.bits(), b) << f;
    }
  }
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(static_cast<float>(fp16(1.1f)), 1.099609375f);
  EXPECT_EQ(fp16(65504.0f).bits(), 0x7bffu);
  EXPECT_EQ(fp16(65519.0f).bits(), 0x7bffu);  // under the midpoint
  EXPECT_EQ(fp16(65520.0f).bits(), 0x7c00u);  // a tie: to even, infinity
  EXPECT_EQ(fp16(0x1p-24f).bits(), 0x0001u);  // the smallest subnormal
  EXPECT_EQ(fp16(0x1p-25f).bits(), 0x0000u);  // a tie with zero: to even
  EXPECT_EQ(fp16(0x1.8p-25f).bits(), 0x0001u);
  EXPECT_EQ(fp16(-0.0f).bits(), 0x8000u);
  EXPECT_EQ(fp16{}.bits(), 0u);
  EXPECT_EQ(std::vector<fp16>(3)[2].bits(), 0u);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(static_cast<float>(fp16(-inf)), -inf);
  // A signalling NaN whose payload lies in the dropped bits stays NaN.
  EXPECT_TRUE(std::isnan(static_cast<float>(fp16(float_of(0x7f800001u)))));
}

// The bulk conversions agree with the scalar ones bit for bit.
TEST(Fp16, BulkConversionsMatchTheScalarOnes) {
  std::vector<fp16> all(0x10000);
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    all[b] = fp16::from_bits(static_cast<std::uint16_t>(b));
  }
  std::vector<float> wide(all.size());
  convert(all.data(), all.size(), wide.data());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float want = all[i];
    EXPECT_EQ(bits_of(wide[i]), bits_of(want)) << i;
  }
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<float> floats(100003);
  for (float& f : floats) f = float_of(bits(rng));
  std::vector<fp16> narrow(floats.size());
  convert(floats.data(), floats.size(), narrow.data());
  for (std::size_t i = 0; i < floats.size(); ++i) {
    EXPECT_EQ(narrow[i].bits(), fp16(floats[i]).bits()) << i;
  }
}

}  // namespace
}  // namespace distconv
