#include "oneflow_lite/shape.h"

#include <limits>
#include <sstream>

#include "oneflow_lite/error.h"

namespace ofl {

namespace {
void CheckRank(int64_t ndim) {
  if (ndim > kMaxDims) {
    throw InvalidArgument("Shape: " + std::to_string(ndim) + " dims given, at most " +
                          std::to_string(kMaxDims) + " are supported");
  }
}
}  // namespace

Shape::Shape(std::initializer_list<int64_t> dims)
    : Shape(dims.begin(), static_cast<int>(dims.size())) {}

Shape::Shape(const std::vector<int64_t>& dims) {
  CheckRank(static_cast<int64_t>(dims.size()));
  ndim_ = static_cast<int>(dims.size());
  for (int i = 0; i < ndim_; ++i) dims_[i] = dims[i];
}

Shape::Shape(const int64_t* dims, int ndim) {
  CheckRank(ndim);
  ndim_ = ndim;
  for (int i = 0; i < ndim_; ++i) dims_[i] = dims[i];
}

int64_t Shape::numel() const {
  // Saturates instead of overflowing, so that an unchecked shape cannot cause undefined behaviour;
  // ops reject such shapes with a clear error (ops::CheckShape).
  int64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < ndim_; ++i) {
    if (dims_[i] == 0) return 0;
    if (__builtin_mul_overflow(n, dims_[i], &n)) overflow = true;
  }
  return overflow ? std::numeric_limits<int64_t>::max() : n;
}

void Shape::push_back(int64_t d) {
  CheckRank(ndim_ + 1);
  dims_[ndim_++] = d;
}

std::string Shape::str() const {
  std::string s = "(";
  for (int i = 0; i < ndim_; ++i) s += std::to_string(dims_[i]) + ",";
  return s + ")";
}

bool operator==(const Shape& a, const Shape& b) {
  if (a.ndim_ != b.ndim_) return false;
  for (int i = 0; i < a.ndim_; ++i) {
    if (a.dims_[i] != b.dims_[i]) return false;
  }
  return true;
}

std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.str(); }

std::string ToString(const int64_t* v, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) s += std::to_string(v[i]) + ",";
  return s + ")";
}

std::vector<int64_t> ContiguousStrides(const Shape& shape) {
  std::vector<int64_t> stride(static_cast<size_t>(shape.ndim()));
  // Saturating: an empty shape may have dims whose product overflows; its strides address nothing.
  int64_t acc = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    stride[i] = acc;
    if (__builtin_mul_overflow(acc, shape[i] > 0 ? shape[i] : 1, &acc)) {
      acc = std::numeric_limits<int64_t>::max();
    }
  }
  return stride;
}

}  // namespace ofl
