#include "oneflow_lite/shape.h"

#include <cstring>
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
  Resize(static_cast<int>(dims.size()));
  if (ndim_ > 0) std::memcpy(data(), dims.data(), sizeof(int64_t) * ndim_);
}

void Shape::InitSlow(const int64_t* dims, int ndim) {
  if (ndim < 0) throw InvalidArgument("Shape: ndim must be >= 0, got " + std::to_string(ndim));
  CheckRank(ndim);
  Resize(ndim);
  if (ndim_ > 0) std::memcpy(data(), dims, sizeof(int64_t) * ndim_);
}

Shape Shape::FilledSlow(int ndim, int64_t value) {
  if (ndim < 0)
    throw InvalidArgument("Shape::Filled: ndim must be >= 0, got " + std::to_string(ndim));
  CheckRank(ndim);
  Shape s;
  s.Resize(ndim);
  for (int i = 0; i < ndim; ++i) s.data()[i] = value;
  return s;
}

void Shape::Resize(int ndim) {
  if (ndim > kInlineDims) heap_ = new int64_t[kMaxDims];
  ndim_ = ndim;
}

void Shape::CopyFromHeap(const Shape& other) {
  Resize(other.ndim_);
  std::memcpy(heap_, other.heap_, sizeof(int64_t) * ndim_);
}

int64_t Shape::NumelSlow() const {
  // Saturates instead of overflowing, so that an unchecked shape cannot cause undefined behaviour;
  // ops reject such shapes with a clear error (ops::CheckShape).
  const int64_t* d = data();
  int64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < ndim_; ++i) {
    if (d[i] == 0) return 0;
    if (__builtin_mul_overflow(n, d[i], &n)) overflow = true;
  }
  return overflow ? std::numeric_limits<int64_t>::max() : n;
}

void Shape::push_back(int64_t d) {
  CheckRank(ndim_ + 1);
  if (ndim_ == kInlineDims) {
    int64_t* heap = new int64_t[kMaxDims];
    std::memcpy(heap, inline_, sizeof(inline_));
    heap_ = heap;
  }
  ++ndim_;
  data()[ndim_ - 1] = d;
}

std::string Shape::str() const {
  std::string s = "(";
  for (int i = 0; i < ndim_; ++i) s += (i ? "," : "") + std::to_string((*this)[i]);
  return s + ")";
}

bool operator==(const Shape& a, const Shape& b) {
  if (a.ndim_ != b.ndim_) return false;
  return a.ndim_ == 0 || std::memcmp(a.data(), b.data(), sizeof(int64_t) * a.ndim_) == 0;
}

std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.str(); }

std::string ToString(const int64_t* v, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}

std::vector<int64_t> ContiguousStrides(const Shape& shape) { return RowMajorStrides(shape).vec(); }

Strides RowMajorStrides(const Shape& shape) {
  Strides stride = shape;  // the right rank (a fixed-size copy when inline), overwritten below
  // Saturating: an empty shape may have dims whose product overflows; its strides address nothing.
  const int64_t* dims = shape.data();
  int64_t* out = stride.data();
  int64_t acc = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    out[i] = acc;
    if (__builtin_mul_overflow(acc, dims[i] > 0 ? dims[i] : 1, &acc)) {
      acc = std::numeric_limits<int64_t>::max();
    }
  }
  return stride;
}

}  // namespace ofl
