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

}  // namespace

double FillValueFromAttr(int64_t attr) {
  double value;
  std::memcpy(&value, &attr, sizeof(value));
  return value;
}

void FillValueToElement(double value, DType dtype, void* element) {
  // Unsigned wrap-around of the int64: the low bits, as two's complement keeps them.
  const uint64_t bits = static_cast<uint64_t>(TruncateToInt64(value));
  switch (dtype) {
    case DType::kBool:
      return Store(static_cast<uint8_t>(value != 0), element);
    case DType::kUInt8:
    case DType::kInt8:
      return Store(static_cast<uint8_t>(bits), element);
    case DType::kInt16:
      return Store(static_cast<uint16_t>(bits), element);
    case DType::kInt32:
      return Store(static_cast<uint32_t>(bits), element);
    case DType::kInt64:
      return Store(bits, element);
    case DType::kFloat16:
      return Store(cpu::FloatToHalfBits(cpu::RoundToOddFloat(value)), element);
    case DType::kBFloat16:
      return Store(cpu::FloatToBFloat16Bits(cpu::RoundToOddFloat(value)), element);
    case DType::kFloat32:
      return Store(static_cast<float>(value), element);
    case DType::kFloat64:
      return Store(value, element);
  }
}

}  // namespace ofl::kernels
