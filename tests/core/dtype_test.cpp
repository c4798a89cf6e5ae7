// DType element sizes and names, and the float16 / bfloat16 host conversions: exact values, round
// to nearest even (checked at every midpoint between neighbouring values), subnormals, infinities,
// NaN and overflow to infinity.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "oneflow_lite/dtype.h"

namespace ofl {
namespace {

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t BitsOfFloat(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

uint16_t HalfBits(float f) { return float16(f).bits; }
uint16_t BF16Bits(float f) { return bfloat16(f).bits; }

bool IsHalfNaN(uint16_t bits) { return (bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0; }
bool IsBF16NaN(uint16_t bits) { return (bits & 0x7f80u) == 0x7f80u && (bits & 0x007fu) != 0; }

TEST(DTypeTest, ElementSizesOfAllTenDTypes) {
  EXPECT_EQ(element_size(DType::kBool), 1u);
  EXPECT_EQ(element_size(DType::kUInt8), 1u);
  EXPECT_EQ(element_size(DType::kInt8), 1u);
  EXPECT_EQ(element_size(DType::kInt16), 2u);
  EXPECT_EQ(element_size(DType::kInt32), 4u);
  EXPECT_EQ(element_size(DType::kInt64), 8u);
  EXPECT_EQ(element_size(DType::kFloat16), 2u);
  EXPECT_EQ(element_size(DType::kBFloat16), 2u);
  EXPECT_EQ(element_size(DType::kFloat32), 4u);
  EXPECT_EQ(element_size(DType::kFloat64), 8u);
}

TEST(DTypeTest, TheFourFloatingDTypesAreFloatingPoint) {
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    EXPECT_TRUE(is_floating_point(d)) << to_string(d);
  }
  for (DType d :
       {DType::kBool, DType::kUInt8, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64}) {
    EXPECT_FALSE(is_floating_point(d)) << to_string(d);
  }
  static_assert(is_floating_point(DType::kFloat32) && !is_floating_point(DType::kInt32));
}

TEST(DTypeTest, NamesOfAllTenDTypes) {
  EXPECT_EQ(to_string(DType::kBool), "bool");
  EXPECT_EQ(to_string(DType::kUInt8), "uint8");
  EXPECT_EQ(to_string(DType::kInt8), "int8");
  EXPECT_EQ(to_string(DType::kInt16), "int16");
  EXPECT_EQ(to_string(DType::kInt32), "int32");
  EXPECT_EQ(to_string(DType::kInt64), "int64");
  EXPECT_EQ(to_string(DType::kFloat16), "float16");
  EXPECT_EQ(to_string(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(to_string(DType::kFloat32), "float32");
  EXPECT_EQ(to_string(DType::kFloat64), "float64");
}

TEST(DTypeTest, DTypeOfMatchesTheCppTypeSize) {
  EXPECT_EQ(DTypeOf<bool>::value, DType::kBool);
  EXPECT_EQ(DTypeOf<uint8_t>::value, DType::kUInt8);
  EXPECT_EQ(DTypeOf<int8_t>::value, DType::kInt8);
  EXPECT_EQ(DTypeOf<int16_t>::value, DType::kInt16);
  EXPECT_EQ(DTypeOf<int32_t>::value, DType::kInt32);
  EXPECT_EQ(DTypeOf<int64_t>::value, DType::kInt64);
  EXPECT_EQ(DTypeOf<float16>::value, DType::kFloat16);
  EXPECT_EQ(DTypeOf<bfloat16>::value, DType::kBFloat16);
  EXPECT_EQ(DTypeOf<float>::value, DType::kFloat32);
  EXPECT_EQ(DTypeOf<double>::value, DType::kFloat64);
  // The host storage types must be exactly as wide as the device element.
  EXPECT_EQ(sizeof(float16), element_size(DType::kFloat16));
  EXPECT_EQ(sizeof(bfloat16), element_size(DType::kBFloat16));
  EXPECT_EQ(kNumDTypes, 10);
}

TEST(Float16Test, ExactValuesFromFloat) {
  EXPECT_EQ(HalfBits(0.0f), 0x0000);
  EXPECT_EQ(HalfBits(-0.0f), 0x8000);
  EXPECT_EQ(HalfBits(1.0f), 0x3c00);
  EXPECT_EQ(HalfBits(-2.0f), 0xc000);
  EXPECT_EQ(HalfBits(0.5f), 0x3800);
  EXPECT_EQ(HalfBits(1.5f), 0x3e00);
  EXPECT_EQ(HalfBits(1024.0f), 0x6400);
  EXPECT_EQ(HalfBits(65504.0f), 0x7bff);  // largest finite half
  EXPECT_EQ(HalfBits(-65504.0f), 0xfbff);
  EXPECT_EQ(HalfBits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(HalfBits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(HalfBits(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(HalfBits(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(HalfBits(std::ldexp(512.0f, -24)), 0x0200);
  EXPECT_EQ(HalfBits(1.0f / 3.0f), 0x3555);
}

TEST(Float16Test, ExactValuesToFloat) {
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x3c00)), 1.0f);
  EXPECT_EQ(static_cast<float>(float16::from_bits(0xc000)), -2.0f);
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x7bff)), 65504.0f);
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x0400)), std::ldexp(1.0f, -14));
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x8001)), -std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x03ff)), std::ldexp(1023.0f, -24));
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x3555)), 0.333251953125f);
  EXPECT_EQ(BitsOfFloat(float16::from_bits(0x8000)), 0x80000000u);  // -0 keeps its sign
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x7c00)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(static_cast<float>(float16::from_bits(0xfc00)),
            -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(static_cast<float>(float16::from_bits(0x7e00))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16::from_bits(0x7c01))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16::from_bits(0xfe00))));
}

TEST(Float16Test, EveryNonNaNHalfRoundTripsThroughFloat) {
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float f = float16::from_bits(bits);
    if (IsHalfNaN(bits)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_TRUE(IsHalfNaN(HalfBits(f))) << std::hex << b;
    } else {
      ASSERT_EQ(HalfBits(f), bits) << std::hex << b << " -> " << f;
    }
  }
}

TEST(Float16Test, RoundsToNearestEvenAtEveryMidpoint) {
  // Between any two neighbouring finite halves (normal or subnormal) the exact midpoint goes to the
  // one with an even mantissa, and the floats just beside it go to the nearer half. The midpoint of
  // two halves needs 12 significant bits, so it is exact in float.
  for (uint32_t b = 0; b < 0x7bffu; ++b) {
    const float lo = float16::from_bits(static_cast<uint16_t>(b));
    const float hi = float16::from_bits(static_cast<uint16_t>(b + 1));
    const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
    ASSERT_EQ(static_cast<double>(mid), (static_cast<double>(lo) + hi) / 2);
    const uint16_t even = static_cast<uint16_t>((b & 1u) == 0 ? b : b + 1);
    ASSERT_EQ(HalfBits(mid), even) << std::hex << b;
    ASSERT_EQ(HalfBits(-mid), even | 0x8000u) << std::hex << b;
    ASSERT_EQ(HalfBits(std::nextafter(mid, 0.0f)), b) << std::hex << b;
    ASSERT_EQ(HalfBits(std::nextafter(mid, 1e9f)), b + 1) << std::hex << b;
    ASSERT_EQ(HalfBits(lo), b);
  }
}

TEST(Float16Test, NamedRoundingCases) {
  EXPECT_EQ(HalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, 0x3c00 is even
  EXPECT_EQ(HalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, 0x3c02 is even
  EXPECT_EQ(HalfBits(std::ldexp(1.0f, -25)), 0x0000);             // half the smallest subnormal
  EXPECT_EQ(HalfBits(std::ldexp(3.0f, -25)), 0x0002);             // 1.5 subnormal ulps
  EXPECT_EQ(HalfBits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(HalfBits(std::ldexp(1.0f, -30)), 0x0000);   // underflows to zero
  EXPECT_EQ(HalfBits(-std::ldexp(1.0f, -30)), 0x8000);  // keeping the sign
  // Largest subnormal plus half an ulp: a tie that carries into the smallest normal.
  EXPECT_EQ(HalfBits(std::ldexp(1023.5f, -24)), 0x0400);
  EXPECT_EQ(HalfBits(std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(Float16Test, OverflowAndInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(HalfBits(inf), 0x7c00);
  EXPECT_EQ(HalfBits(-inf), 0xfc00);
  EXPECT_EQ(HalfBits(std::nextafter(65520.0f, 0.0f)), 0x7bff);  // just below the tie
  EXPECT_EQ(HalfBits(65520.0f), 0x7c00);  // the tie between 65504 and 65536 rounds to even: inf
  EXPECT_EQ(HalfBits(-65520.0f), 0xfc00);
  EXPECT_EQ(HalfBits(65536.0f), 0x7c00);
  EXPECT_EQ(HalfBits(1e6f), 0x7c00);
  EXPECT_EQ(HalfBits(-1e6f), 0xfc00);
  EXPECT_EQ(HalfBits(std::numeric_limits<float>::max()), 0x7c00);
}

TEST(Float16Test, NaNStaysNaN) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(IsHalfNaN(HalfBits(qnan)));
  EXPECT_TRUE(IsHalfNaN(HalfBits(-qnan)));
  // NaN payloads that live only in the low 13 bits must not truncate to infinity.
  EXPECT_TRUE(IsHalfNaN(HalfBits(FloatFromBits(0x7f800001u))));
  EXPECT_TRUE(IsHalfNaN(HalfBits(FloatFromBits(0xff800001u))));
  EXPECT_TRUE(IsHalfNaN(HalfBits(FloatFromBits(0x7fffffffu))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16(qnan))));
}

TEST(BFloat16Test, ExactValues) {
  EXPECT_EQ(BF16Bits(0.0f), 0x0000);
  EXPECT_EQ(BF16Bits(-0.0f), 0x8000);
  EXPECT_EQ(BF16Bits(1.0f), 0x3f80);
  EXPECT_EQ(BF16Bits(-2.0f), 0xc000);
  EXPECT_EQ(BF16Bits(0.5f), 0x3f00);
  EXPECT_EQ(BF16Bits(3.0f), 0x4040);
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x3f80)), 1.0f);
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x4040)), 3.0f);
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x7f7f)), FloatFromBits(0x7f7f0000u));
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x0001)), FloatFromBits(0x00010000u));
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x7f80)),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16::from_bits(0x7fc0))));
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16::from_bits(0x7f81))));
}

TEST(BFloat16Test, EveryBFloat16RoundTripsThroughFloat) {
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float f = bfloat16::from_bits(bits);
    ASSERT_EQ(BitsOfFloat(f), b << 16);
    if (IsBF16NaN(bits)) {
      ASSERT_TRUE(IsBF16NaN(BF16Bits(f))) << std::hex << b;
    } else {
      ASSERT_EQ(BF16Bits(f), bits) << std::hex << b;
    }
  }
}

TEST(BFloat16Test, RoundsToNearestEvenAtEveryMidpoint) {
  // Bit pattern (b << 16) | 0x8000 is the exact midpoint between bfloat16 b and b + 1 (including
  // subnormals, and from the largest finite value up to infinity).
  for (uint32_t b = 0; b < 0x7f80u; ++b) {
    const uint32_t mid = (b << 16) | 0x8000u;
    const uint16_t even = static_cast<uint16_t>((b & 1u) == 0 ? b : b + 1);
    ASSERT_EQ(BF16Bits(FloatFromBits(mid)), even) << std::hex << b;
    ASSERT_EQ(BF16Bits(FloatFromBits(mid | 0x80000000u)), even | 0x8000u) << std::hex << b;
    ASSERT_EQ(BF16Bits(FloatFromBits(mid - 1)), b) << std::hex << b;
    ASSERT_EQ(BF16Bits(FloatFromBits(mid + 1)), b + 1) << std::hex << b;
  }
}

TEST(BFloat16Test, NamedRoundingOverflowAndNaN) {
  EXPECT_EQ(BF16Bits(FloatFromBits(0x3f808000u)), 0x3f80);  // tie to even (down)
  EXPECT_EQ(BF16Bits(FloatFromBits(0x3f818000u)), 0x3f82);  // tie to even (up)
  EXPECT_EQ(BF16Bits(FloatFromBits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(BF16Bits(FloatFromBits(0x00008000u)), 0x0000);  // subnormal tie to zero
  EXPECT_EQ(BF16Bits(FloatFromBits(0x00018000u)), 0x0002);  // subnormal tie up
  // The largest float rounds up past the largest bfloat16: infinity.
  EXPECT_EQ(BF16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(BF16Bits(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(BF16Bits(FloatFromBits(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(BF16Bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(BF16Bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_TRUE(IsBF16NaN(BF16Bits(std::numeric_limits<float>::quiet_NaN())));
  // Payloads below bit 16 would truncate (or round) to infinity without care.
  EXPECT_TRUE(IsBF16NaN(BF16Bits(FloatFromBits(0x7f800001u))));
  EXPECT_TRUE(IsBF16NaN(BF16Bits(FloatFromBits(0xff800001u))));
  EXPECT_TRUE(IsBF16NaN(BF16Bits(FloatFromBits(0x7fffffffu))));
  EXPECT_TRUE(IsBF16NaN(BF16Bits(FloatFromBits(0x7fff8000u))));
}

TEST(HalfTypesTest, EqualityComparesBits) {
  EXPECT_TRUE(float16(1.0f) == float16::from_bits(0x3c00));
  EXPECT_FALSE(float16(0.0f) == float16(-0.0f));
  EXPECT_TRUE(bfloat16(1.0f) == bfloat16::from_bits(0x3f80));
  EXPECT_FALSE(bfloat16(0.0f) == bfloat16(-0.0f));
  EXPECT_EQ(float16().bits, 0);
  EXPECT_EQ(bfloat16().bits, 0);
}

}  // namespace
}  // namespace ofl
