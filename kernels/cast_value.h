// One element converted between dtypes: the rule of the "cast" kernels on every device (kernels/
// cpu/cast_kernel.cpp, kernels/cuda/cast_kernel.cu), written once so that a cast gives the same
// bits on cpu, sim and cuda. From and To are the types an element computes in: bool, the
// integers, float and double (float16 and bfloat16 load as float and store from it, rounded to
// nearest even). The rules:
// - to bool: x != 0 (NaN is true);
// - integer or bool to integer: two's-complement wrap-around (int64 2**32 + 5 to int32 is 5);
// - float to integer: truncation toward zero, saturated to the integer's range, NaN to 0 (CUDA's
//   conversion instructions' rule; C++ leaves these cases undefined);
// - anything else: the nearest value (C++'s conversion).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE

namespace ofl::kernels {

template <class To, class From>
OFL_HOST_DEVICE inline To CastValue(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (x != x) return To(0);
    constexpr To lo = std::numeric_limits<To>::min();
    constexpr To hi = std::numeric_limits<To>::max();
    if (x <= static_cast<From>(lo)) return lo;
    if (x >= static_cast<From>(hi)) return hi;  // hi as From rounds up to a power of two
    return static_cast<To>(x);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From> &&
                       !std::is_same_v<From, bool>) {
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace ofl::kernels
