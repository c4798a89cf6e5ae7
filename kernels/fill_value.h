// The value of a "fill" as the bytes of one element, converted once on the host: every device's
// fill kernel writes exactly these bytes, so all devices agree bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "oneflow_lite/dtype.h"
#include "oneflow_lite/scalar.h"

namespace ofl::kernels {

// How FillValue::bits holds the value.
enum class FillKind : int64_t {
  kDouble = 0,  // a double's bit pattern (std::memcpy of the double into an int64_t)
  kInt64 = 1,   // an int64
  kUInt64 = 2,  // a uint64's bits
};

struct FillValue {
  FillKind kind = FillKind::kDouble;
  int64_t bits = 0;
};

// A fill's "value" attribute (a bool fills as the integer 0 or 1).
FillValue FillValueOf(const Scalar& value);

// Writes `value` converted to `dtype` into `element` (element_size(dtype) bytes): bool is
// value != 0; a double to an integer dtype is truncated toward zero as static_cast does, and a
// value the dtype cannot hold wraps to its width as two's complement (-1 gives uint8 255; NaN
// gives 0; beyond the int64 range saturates first); an integer to an integer dtype keeps its low
// bits; float32 and float64 round to nearest even once; float16 and bfloat16 round the exact value
// once, to nearest even (never through a float rounded to nearest first).
void FillValueToElement(const FillValue& value, DType dtype, void* element);
void FillValueToElement(double value, DType dtype, void* element);

}  // namespace ofl::kernels
