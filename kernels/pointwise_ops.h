// The pointwise ops beyond arithmetic, one kernel family on every device: comparisons and logical
// ops (bool results), maximum/minimum, bitwise ops, clamp and where. Their names, which dtypes each
// takes, and the math of one element, written once for the CPU kernels (kernels/cpu/
// pointwise_kernel.cpp) and the CUDA kernels (kernels/cuda/pointwise_kernel.cu), which the host
// grid runs on the CPU.
//
// Operands of one call share a dtype (the op's entry casts them to the promoted type first), except
// where's condition, which is bool. Values compute as V: float16 and bfloat16 as float, every other
// type as itself (so signed integers compare as signed, and bool as bool).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE

namespace ofl::kernels {

enum class PointwiseOp : uint8_t {
  // (T, T) -> bool, any T
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  // (T) -> bool, any T
  kLogicalNot,
  // (T, T) -> T, any T; a NaN operand gives NaN
  kMaximum,
  kMinimum,
  // (T, T) -> T, integer or float T: a ** b (integers: exact, wrapping; a negative exponent gives
  // 0 but for a base of 1 or -1, as PyTorch's)
  kPow,
  // (T, T) -> T and (T) -> T, integer or bool T
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kBitwiseNot,
  // (T) -> T, integer or float T: min(max(x, lo), hi) (clamp, clamp_min, clamp_max)
  kClamp,
  kClampMin,
  kClampMax,
  // (bool, T, T) -> T, any T
  kWhere,
};
constexpr int kNumPointwiseOps = static_cast<int>(PointwiseOp::kWhere) + 1;

// The op's name ("eq", ..., "logical_and", ..., "bitwise_not", "clamp", "where").
const char* PointwiseOpName(PointwiseOp op);

constexpr int PointwiseArity(PointwiseOp op) {
  return op == PointwiseOp::kWhere ? 3
         : op == PointwiseOp::kLogicalNot || op == PointwiseOp::kBitwiseNot ||
                 op == PointwiseOp::kClamp || op == PointwiseOp::kClampMin ||
                 op == PointwiseOp::kClampMax
             ? 1
             : 2;
}
// Whether the output is bool whatever the inputs' dtype.
constexpr bool PointwiseGivesBool(PointwiseOp op) { return op <= PointwiseOp::kLogicalNot; }
constexpr bool PointwiseIsBitwise(PointwiseOp op) {
  return op >= PointwiseOp::kBitwiseAnd && op <= PointwiseOp::kBitwiseNot;
}
constexpr bool PointwiseIsClamp(PointwiseOp op) {
  return op >= PointwiseOp::kClamp && op <= PointwiseOp::kClampMax;
}

// Whether op kOp has a kernel for elements of stored type T (a device's: its own float16 type
// included); CheckPointwiseArgs refuses the other dtypes before a kernel runs.
template <PointwiseOp kOp, class T>
constexpr bool PointwiseTakes() {
  if constexpr (PointwiseIsBitwise(kOp)) return std::is_integral_v<T>;  // bool included
  if constexpr (PointwiseIsClamp(kOp) || kOp == PointwiseOp::kPow) return !std::is_same_v<T, bool>;
  return true;
}

// What clamp reads besides its input: the bounds, as doubles for float inputs and as int64 for
// integer ones (an absent bound is the widest value: clamp_min's hi, clamp_max's lo).
struct PointwiseParams {
  double lo = 0, hi = 0;
  int64_t lo_int = 0, hi_int = 0;
};

// One element of a two-input op (kEq .. kBitwiseXor). V: the value type above.
template <PointwiseOp kOp, class V>
OFL_HOST_DEVICE inline auto ApplyPointwise(V a, V b) {
  if constexpr (kOp == PointwiseOp::kEq) {
    return a == b;
  } else if constexpr (kOp == PointwiseOp::kNe) {
    return a != b;
  } else if constexpr (kOp == PointwiseOp::kLt) {
    return a < b;
  } else if constexpr (kOp == PointwiseOp::kLe) {
    return a <= b;
  } else if constexpr (kOp == PointwiseOp::kGt) {
    return a > b;
  } else if constexpr (kOp == PointwiseOp::kGe) {
    return a >= b;
  } else if constexpr (kOp == PointwiseOp::kLogicalAnd) {
    return a != V(0) && b != V(0);  // NaN is true, as in PyTorch
  } else if constexpr (kOp == PointwiseOp::kLogicalOr) {
    return a != V(0) || b != V(0);
  } else if constexpr (kOp == PointwiseOp::kLogicalXor) {
    return (a != V(0)) != (b != V(0));
  } else if constexpr (kOp == PointwiseOp::kMaximum || kOp == PointwiseOp::kMinimum) {
    if constexpr (std::is_floating_point_v<V>) {
      if (a != a) return a;  // NaN propagates
      if (b != b) return b;
    }
    if constexpr (kOp == PointwiseOp::kMaximum) {
      return a > b ? a : b;
    } else {
      return a < b ? a : b;
    }
  } else if constexpr (kOp == PointwiseOp::kPow) {
    if constexpr (std::is_same_v<V, float>) {
      return ::powf(a, b);
    } else if constexpr (std::is_floating_point_v<V>) {
      return ::pow(a, b);
    } else {
      // Integers: by squaring in 64 unsigned bits (wrapping to V's width as PyTorch's).
      using W = std::conditional_t<std::is_signed_v<V>, int64_t, uint64_t>;
      const W e = static_cast<W>(b);
      if constexpr (std::is_signed_v<V>) {
        if (e < 0) {
          if (a == V(1)) return V(1);
          if (a == V(-1)) return static_cast<V>((e & 1) ? -1 : 1);
          return V(0);
        }
      }
      uint64_t base = static_cast<uint64_t>(static_cast<W>(a)), r = 1;
      for (uint64_t k = static_cast<uint64_t>(e); k != 0; k >>= 1) {
        if (k & 1) r *= base;
        base *= base;
      }
      return static_cast<V>(r);
    }
  } else if constexpr (kOp == PointwiseOp::kBitwiseAnd) {
    return static_cast<V>(a & b);
  } else if constexpr (kOp == PointwiseOp::kBitwiseOr) {
    return static_cast<V>(a | b);
  } else {
    static_assert(kOp == PointwiseOp::kBitwiseXor, "a two-input pointwise op");
    return static_cast<V>(a ^ b);
  }
}

// One element of a one-input op (kLogicalNot, kBitwiseNot, the clamps).
template <PointwiseOp kOp, class V>
OFL_HOST_DEVICE inline auto ApplyPointwise(V x, const PointwiseParams& p) {
  if constexpr (kOp == PointwiseOp::kLogicalNot) {
    return x == V(0);
  } else if constexpr (kOp == PointwiseOp::kBitwiseNot) {
    if constexpr (std::is_same_v<V, bool>) {
      return !x;
    } else {
      return static_cast<V>(~x);
    }
  } else if constexpr (std::is_floating_point_v<V>) {
    static_assert(PointwiseIsClamp(kOp), "a one-input pointwise op");
    // NaN in x or a bound gives NaN; lo > hi gives hi (as PyTorch's min(max(x, lo), hi)).
    if (x != x) return x;
    if constexpr (kOp != PointwiseOp::kClampMax) {
      const V lo = static_cast<V>(p.lo);
      if (lo != lo) return lo;
      if (x < lo) x = lo;
    }
    if constexpr (kOp != PointwiseOp::kClampMin) {
      const V hi = static_cast<V>(p.hi);
      if (hi != hi) return hi;
      if (x > hi) x = hi;
    }
    return x;
  } else {
    static_assert(PointwiseIsClamp(kOp), "a one-input pointwise op");
    int64_t v = static_cast<int64_t>(x);
    if constexpr (kOp != PointwiseOp::kClampMax) v = v < p.lo_int ? p.lo_int : v;
    if constexpr (kOp != PointwiseOp::kClampMin) v = v > p.hi_int ? p.hi_int : v;
    return static_cast<V>(v);
  }
}

}  // namespace ofl::kernels
