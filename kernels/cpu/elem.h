// How the CPU kernels store and compute each element type (the elementwise kernels: binary,
// unary, cast): integers compute in an unsigned type of at least 32 bits (wrap-around without
// undefined behaviour, and no promotion of narrow types to int); float16 and bfloat16 are stored
// as their bits and compute in float, rounded once to the output.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/half_cast.h"
#include "oneflow_lite/dtype.h"

namespace ofl::kernels::cpu {

template <class T>
struct Elem {  // the integers
  using Storage = T;
  using Unsigned = std::make_unsigned_t<T>;
  using Compute = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, Unsigned>;
  static Compute Load(T x) { return static_cast<Compute>(static_cast<Unsigned>(x)); }
  static T Store(Compute c) { return static_cast<T>(static_cast<Unsigned>(c)); }
};
template <class T>
struct FloatElem {
  using Storage = T;
  using Compute = T;
  static T Load(T x) { return x; }
  static T Store(T c) { return c; }
};
template <>
struct Elem<float> : FloatElem<float> {};
template <>
struct Elem<double> : FloatElem<double> {};
template <>
struct Elem<float16> {
  using Storage = uint16_t;
  using Compute = float;
  static float Load(uint16_t x) { return HalfBitsToFloat(x); }
  static uint16_t Store(float c) { return FloatToHalfBits(c); }
};
template <>
struct Elem<bfloat16> {
  using Storage = uint16_t;
  using Compute = float;
  static float Load(uint16_t x) { return BFloat16BitsToFloat(x); }
  static uint16_t Store(float c) { return FloatToBFloat16Bits(c); }
};

// How the kernels that keep each type's own values store and compute it (cast, the pointwise ops:
// comparisons compare signed integers as signed): float16 and bfloat16 as Elem does (their bits,
// computed in float), every other type as itself.
template <class T>
struct ValueElem {
  using Storage = T;
  using Compute = T;
  static T Load(T x) { return x; }
  static T Store(T c) { return c; }
};
template <>
struct ValueElem<float16> : Elem<float16> {};
template <>
struct ValueElem<bfloat16> : Elem<bfloat16> {};

}  // namespace ofl::kernels::cpu
