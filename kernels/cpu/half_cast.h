// Conversions between float and the 16-bit floats (float16, bfloat16) for CPU kernel loops: inline
// and branch-free, so that loops over 16-bit elements vectorise (float16's own conversions in
// oneflow_lite/dtype.cpp are out of line and branch). Each gives the bits of the runtime's own
// conversion for every input (NaNs: see each function), which tests/kernels/half_cast_test.cpp
// checks.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "oneflow_lite/dtype.h"

namespace ofl::kernels::cpu {

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
inline uint32_t FloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// float16 bits to float with masks instead of branches. Exact, with the bits of float16::operator
// float for every input but signalling NaNs (which come out quiet, as any arithmetic makes them):
// normal, infinite and NaN values rebias the exponent by 224 and scale by 2^-112; subnormals
// (m * 2^-24) come from 0.5 + m * 2^-24 minus 0.5.
inline float HalfBitsToFloat(uint16_t bits) {
  const uint32_t em = bits & 0x7fffu;
  const float normal = BitsToFloat((em << 13) + (0xE0u << 23)) * 0x1.0p-112f;
  const float subnormal = BitsToFloat(em | (126u << 23)) - 0.5f;
  const uint32_t is_subnormal = -static_cast<uint32_t>(static_cast<int32_t>(em) < 0x400);
  const uint32_t magnitude =
      (FloatToBits(subnormal) & is_subnormal) | (FloatToBits(normal) & ~is_subnormal);
  return BitsToFloat((static_cast<uint32_t>(bits & 0x8000u) << 16) | magnitude);
}
inline float HalfToFloat(float16 h) { return HalfBitsToFloat(h.bits); }

// float to float16 bits, rounded to nearest even: the bits of float16(float) for every input
// (NaN: the sign and 0x7e00). Every case is computed and the right one selected with masks (a
// conditional expression would keep the loop from vectorising).
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t x = FloatToBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t abs = static_cast<int32_t>(x & 0x7fffffffu);
  const uint32_t uabs = static_cast<uint32_t>(abs);
  // Normal: rebias the exponent (-112 << 23) and round the 13 dropped bits to nearest even.
  const uint32_t normal = (uabs + 0xc8000fffu + ((uabs >> 13) & 1u)) >> 13;
  // Subnormal or zero: adding 2^23 rounds the value scaled by 2^24 to an integer in the low
  // mantissa bits (1024, a carry into the exponent, is exactly the smallest normal half).
  const uint32_t subnormal =
      FloatToBits(BitsToFloat(uabs) * 16777216.0f + 8388608.0f) - 0x4b000000u;
  const uint32_t is_subnormal = -static_cast<uint32_t>(abs < 0x38800000);
  const uint32_t is_inf = -static_cast<uint32_t>(abs >= 0x477ff000);  // rounds to 65520 or more
  const uint32_t is_nan = -static_cast<uint32_t>(abs > 0x7f800000);
  uint32_t r = (subnormal & is_subnormal) | (normal & ~is_subnormal);
  r = (0x7c00u & is_inf) | (r & ~is_inf);
  r = (0x7e00u & is_nan) | (r & ~is_nan);
  return static_cast<uint16_t>(sign | r);
}

inline float BFloat16BitsToFloat(uint16_t bits) {
  return BitsToFloat(static_cast<uint32_t>(bits) << 16);
}

// float to bfloat16 bits, rounded to nearest even: the bits of bfloat16(float) for every input
// (NaN: its upper half, made quiet).
inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = FloatToBits(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  const uint32_t is_nan =
      -static_cast<uint32_t>(static_cast<int32_t>(x & 0x7fffffffu) > 0x7f800000);
  return static_cast<uint16_t>((nan & is_nan) | (rounded & ~is_nan));
}

// double to float rounded to odd: truncated, with the last bit set when that dropped anything. A
// 16-bit float then rounds once, correctly: rounding the double to nearest float first could land
// on a tie that the double was not (1 + 2^-11 + 2^-40 would become float16 1, not 1 + 2^-10).
inline float RoundToOddFloat(double d) {
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || std::isnan(d)) return f;
  uint32_t u = FloatToBits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --u;  // rounded away from zero: back off
  return BitsToFloat(u | 1u);
}

}  // namespace ofl::kernels::cpu
