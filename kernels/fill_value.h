// The value of a "fill" as the bytes of one element, converted once on the host: every device's
// fill kernel writes exactly these bytes, so all devices agree bit for bit.
#pragma once

#include <cstdint>

#include "oneflow_lite/dtype.h"

namespace ofl::kernels {

// The double whose bit pattern attrs[0] holds (std::memcpy of the double into an int64_t).
double FillValueFromAttr(int64_t attr);

// Writes `value` converted to `dtype` into `element` (element_size(dtype) bytes): bool is
// value != 0; integers are truncated toward zero as static_cast does, and a value the dtype cannot
// hold wraps to its width as two's complement (-1 gives uint8 255; NaN gives 0; beyond the int64
// range saturates first); float32 rounds to nearest even; float16 and bfloat16 round the double
// once, to nearest even (never through a float rounded to nearest first).
void FillValueToElement(double value, DType dtype, void* element);

}  // namespace ofl::kernels
