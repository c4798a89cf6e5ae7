// The CPU kernels' inline 16-bit float conversions (kernels/cpu/half_cast.h) give the bits of the
// runtime's own conversions (oneflow_lite/dtype.h): every 16-bit pattern to float, and floats to
// 16 bits over every exponent with many mantissas (the rounding boundaries, subnormals,
// overflow, infinities and NaNs among them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "kernels/cpu/half_cast.h"
#include "oneflow_lite/dtype.h"

namespace ofl::kernels::cpu {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

TEST(HalfCastTest, EverySixteenBitPatternToFloat) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float want = float16::from_bits(h);
    const float got = HalfBitsToFloat(h);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << b;  // signalling NaNs come out quiet
    } else {
      ASSERT_EQ(Bits(got), Bits(want)) << std::hex << b;
    }
    ASSERT_EQ(Bits(BFloat16BitsToFloat(h)), Bits(static_cast<float>(bfloat16::from_bits(h))))
        << std::hex << b;
  }
}

// Every exponent and sign, with the low 16 mantissa bits (around every rounding boundary of both
// formats) all taken, and random upper bits.
TEST(HalfCastTest, FloatsToSixteenBitsAsTheRuntimeRounds) {
  std::mt19937 rng(1);
  for (uint32_t sign_exp = 0; sign_exp < 512; ++sign_exp) {
    for (uint32_t low = 0; low < 0x10000u; low += 1 + (low & 7)) {
      for (uint32_t high : {0u, 0x7fu, static_cast<uint32_t>(rng() & 0x7f)}) {
        const uint32_t u = (sign_exp << 23) | (high << 16) | low;
        float f;
        std::memcpy(&f, &u, sizeof(f));
        ASSERT_EQ(FloatToHalfBits(f), float16(f).bits) << std::hex << u;
        ASSERT_EQ(FloatToBFloat16Bits(f), bfloat16(f).bits) << std::hex << u;
      }
    }
  }
}

}  // namespace
}  // namespace ofl::kernels::cpu
