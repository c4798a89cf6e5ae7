// Scalar: a number given to an op (full, fill_, the number operand of the arithmetic ops and their
// in-place forms) as the caller wrote it: a bool, a 64-bit integer or a double, as PyTorch's
// c10::Scalar. An integer reaches an integer dtype exactly (through a double, every bit past the
// 53rd would be lost), and a value the dtype cannot hold is refused instead of wrapped.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "oneflow_lite/dtype.h"

namespace ofl {

class Scalar {
 public:
  // kUInt64 only for an integer beyond int64's range (2^63 .. 2^64 - 1).
  enum class Kind : uint8_t { kBool, kInt64, kUInt64, kDouble };

  Scalar() : Scalar(int64_t{0}) {}  // the integer 0, as c10::Scalar
  // Implicit, so that a number goes wherever a Scalar is taken (t.fill_(1), x * 2.5).
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT(google-explicit-constructor)
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::kBool;
      i_ = v ? 1 : 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      kind_ = Kind::kDouble;
      d_ = static_cast<double>(v);
    } else if constexpr (std::is_signed_v<T>) {
      kind_ = Kind::kInt64;
      i_ = static_cast<int64_t>(v);
    } else if (static_cast<uint64_t>(v) <= static_cast<uint64_t>(INT64_MAX)) {
      kind_ = Kind::kInt64;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::kUInt64;
      u_ = static_cast<uint64_t>(v);
    }
  }
  Scalar(float16 v) : Scalar(static_cast<float>(v)) {}   // NOLINT(google-explicit-constructor)
  Scalar(bfloat16 v) : Scalar(static_cast<float>(v)) {}  // NOLINT(google-explicit-constructor)

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::kDouble; }
  // The integer of kBool (0 or 1) and kInt64.
  int64_t int64_value() const { return i_; }
  // The integer of kUInt64 (and of kInt64 >= 0).
  uint64_t uint64_value() const { return u_; }
  // The double of kDouble.
  double double_value() const { return d_; }
  // Any kind as a double, rounded to nearest.
  double to_double() const;

  // Whether `dtype` holds the value, by PyTorch's rule (c10::overflows): an integer dtype holds
  // a bool, an integer within its range (uint8 also a negative integer down to -255, wrapping as
  // two's complement: -1 is 255) and a double within its range, not NaN (truncated toward zero:
  // 2.7 is 2); bool and the floating dtypes hold every value (a floating dtype rounds to nearest,
  // to infinity beyond its range).
  bool fits(DType dtype) const;

  // As Python prints it: True, -3, 2.5, nan.
  std::string str() const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    uint64_t u_;
    double d_;
  };
};

// InvalidArgument naming `op` and `what` (clamp's "min") unless `dtype` holds v as a value of its
// own kind: a floating-point v for an integer or bool dtype is refused ("is not a whole number"),
// and so is one past the dtype's range (fits).
void CheckHeldBy(const Scalar& v, DType dtype, const std::string& op, const char* what);

}  // namespace ofl
