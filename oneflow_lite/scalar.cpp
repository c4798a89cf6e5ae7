#include "oneflow_lite/scalar.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "oneflow_lite/error.h"

namespace ofl {
namespace {

// The integer range of an integer dtype.
template <class T>
void Range(int64_t* lo, int64_t* hi) {
  *lo = static_cast<int64_t>(std::numeric_limits<T>::lowest());
  *hi = static_cast<int64_t>(std::numeric_limits<T>::max());
}

bool IntegerRange(DType dtype, int64_t* lo, int64_t* hi) {
  switch (dtype) {
    case DType::kUInt8:
      Range<uint8_t>(lo, hi);
      return true;
    case DType::kInt8:
      Range<int8_t>(lo, hi);
      return true;
    case DType::kInt16:
      Range<int16_t>(lo, hi);
      return true;
    case DType::kInt32:
      Range<int32_t>(lo, hi);
      return true;
    case DType::kInt64:
      Range<int64_t>(lo, hi);
      return true;
    default:
      return false;
  }
}

}  // namespace

double Scalar::to_double() const {
  switch (kind_) {
    case Kind::kBool:
    case Kind::kInt64:
      return static_cast<double>(i_);
    case Kind::kUInt64:
      return static_cast<double>(u_);
    case Kind::kDouble:
      break;
  }
  return d_;
}

bool Scalar::fits(DType dtype) const {
  int64_t lo = 0, hi = 0;
  if (!IntegerRange(dtype, &lo, &hi)) return true;
  if (dtype == DType::kUInt8) lo = -hi;
  switch (kind_) {
    case Kind::kBool:
      return true;
    case Kind::kInt64:
      return i_ >= lo && i_ <= hi;
    case Kind::kUInt64:
      return false;  // beyond int64, the widest integer dtype
    case Kind::kDouble:
      break;
  }
  if (std::isnan(d_)) return false;
  // int64's maximum is no double: 2^63 is the first value beyond it.
  if (dtype == DType::kInt64) return d_ >= -9223372036854775808.0 && d_ < 9223372036854775808.0;
  if (dtype == DType::kUInt8) lo = 0;  // the wrap-around is for integers only, as in PyTorch
  return d_ >= static_cast<double>(lo) && d_ <= static_cast<double>(hi);
}

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::kBool:
      return i_ != 0 ? "True" : "False";
    case Kind::kInt64:
      return std::to_string(i_);
    case Kind::kUInt64:
      return std::to_string(u_);
    case Kind::kDouble:
      break;
  }
  if (std::isnan(d_)) return "nan";
  if (std::isinf(d_)) return d_ > 0 ? "inf" : "-inf";
  // The shortest form that reads back as the same double, as Python's repr.
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, d_);
    if (std::strtod(buf, nullptr) == d_) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

void CheckHeldBy(const Scalar& v, DType dtype, const std::string& op, const char* what) {
  if (!is_floating_point(dtype) && v.is_floating_point()) {
    throw InvalidArgument(op + ": " + what + " " + v.str() + " is not a whole number, for dtype " +
                          to_string(dtype) + " (cast the tensor to a float dtype first)");
  }
  if (!v.fits(dtype)) {
    throw InvalidArgument(op + ": " + what + " " + v.str() + " cannot be converted to type " +
                          to_string(dtype) + " without overflow");
  }
}

}  // namespace ofl
