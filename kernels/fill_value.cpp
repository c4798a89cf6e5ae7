#include "kernels/fill_value.h"

#include <cmath>
#include <cstring>

#include "kernels/cpu/half_cast.h"

namespace ofl::kernels {
namespace {

// Truncated toward zero; NaN is 0 and values beyond int64 saturate (static_cast would be
// undefined there).
int64_t TruncateToInt64(double value) {
  if (std::isnan(value)) return 0;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (value >= kTwo63) return INT64_MAX;
  if (value < -kTwo63) return INT64_MIN;
  return static_cast<int64_t>(value);
}

template <class T>
void Store(T v, void* element) {
  std::memcpy(element, &v, sizeof(T));
}

// Stores the low bits of `bits` for an integer dtype (or bool: `nonzero`); false for a floating
// dtype.
bool StoreInteger(uint64_t bits, bool nonzero, DType dtype, void* element) {
  switch (dtype) {
    case DType::kBool:
      Store(static_cast<uint8_t>(nonzero), element);
      return true;
    case DType::kUInt8:
    case DType::kInt8:
      Store(static_cast<uint8_t>(bits), element);
      return true;
    case DType::kInt16:
      Store(static_cast<uint16_t>(bits), element);
      return true;
    case DType::kInt32:
      Store(static_cast<uint32_t>(bits), element);
      return true;
    case DType::kInt64:
      Store(bits, element);
      return true;
    default:
      return false;
  }
}

// |v| (sign apart) rounded to odd at a double's 53 bits: truncated, with the last bit set when
// that dropped anything. A 16-bit float rounded from it (through RoundToOddFloat) is the
// correctly rounded integer; rounding to the nearest double first could land on a tie the
// integer was not (2^62 + 2^54 + 1 would become bfloat16 2^62, not 2^62 + 2^55).
double MagnitudeRoundedToOdd(uint64_t magnitude) {
  int shift = 0;
  while ((magnitude >> shift) >= (uint64_t{1} << 53)) ++shift;
  if (shift == 0) return static_cast<double>(magnitude);
  const uint64_t kept = magnitude >> shift;
  const bool dropped = (magnitude & ((uint64_t{1} << shift) - 1)) != 0;
  return std::ldexp(static_cast<double>(kept | (dropped ? 1 : 0)), shift);
}

// A float dtype from an integer of magnitude `magnitude` and sign `negative`: float32 and
// float64 by the conversions C++ rounds once to nearest, the 16-bit floats from the odd-rounded
// double.
template <class Int>
void StoreIntegerAsFloat(Int v, uint64_t magnitude, bool negative, DType dtype, void* element) {
  switch (dtype) {
    case DType::kFloat32:
      return Store(static_cast<float>(v), element);
    case DType::kFloat64:
      return Store(static_cast<double>(v), element);
    default:
      break;
  }
  const double odd =
      negative ? -MagnitudeRoundedToOdd(magnitude) : MagnitudeRoundedToOdd(magnitude);
  const float f = cpu::RoundToOddFloat(odd);
  if (dtype == DType::kFloat16) return Store(cpu::FloatToHalfBits(f), element);
  return Store(cpu::FloatToBFloat16Bits(f), element);
}

}  // namespace

namespace {
double BitsToDouble(int64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
}  // namespace

FillValue FillValueOf(const Scalar& value) {
  FillValue v;
  switch (value.kind()) {
    case Scalar::Kind::kBool:
    case Scalar::Kind::kInt64:
      v.kind = FillKind::kInt64;
      v.bits = value.int64_value();
      break;
    case Scalar::Kind::kUInt64:
      v.kind = FillKind::kUInt64;
      v.bits = static_cast<int64_t>(value.uint64_value());
      break;
    case Scalar::Kind::kDouble: {
      const double d = value.double_value();
      std::memcpy(&v.bits, &d, sizeof d);
      break;
    }
  }
  return v;
}

void FillValueToElement(const FillValue& value, DType dtype, void* element) {
  switch (value.kind) {
    case FillKind::kDouble:
      return FillValueToElement(BitsToDouble(value.bits), dtype, element);
    case FillKind::kInt64: {
      const int64_t v = value.bits;
      if (StoreInteger(static_cast<uint64_t>(v), v != 0, dtype, element)) return;
      // -(uint64)v: the magnitude, INT64_MIN included.
      const uint64_t magnitude =
          v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      return StoreIntegerAsFloat(v, magnitude, v < 0, dtype, element);
    }
    case FillKind::kUInt64: {
      const auto v = static_cast<uint64_t>(value.bits);
      if (StoreInteger(v, v != 0, dtype, element)) return;
      return StoreIntegerAsFloat(v, v, false, dtype, element);
    }
  }
}

void FillValueToElement(double value, DType dtype, void* element) {
  // Unsigned wrap-around of the int64: the low bits, as two's complement keeps them.
  const uint64_t bits = static_cast<uint64_t>(TruncateToInt64(value));
  if (StoreInteger(bits, value != 0, dtype, element)) return;
  switch (dtype) {
    case DType::kFloat16:
      return Store(cpu::FloatToHalfBits(cpu::RoundToOddFloat(value)), element);
    case DType::kBFloat16:
      return Store(cpu::FloatToBFloat16Bits(cpu::RoundToOddFloat(value)), element);
    case DType::kFloat32:
      return Store(static_cast<float>(value), element);
    default:
      return Store(value, element);
  }
}

}  // namespace ofl::kernels
