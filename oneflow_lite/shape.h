// Shape: the int64 sizes of a tensor (at most kMaxDims). Up to six are stored inline, so that
// copying a usual shape never touches the heap on the per-op path.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace ofl {

// PyTorch allows 64 dims; OneFlow's kernels stop at 25 (SHAPE_MAX_AXIS_SIZE). We follow OneFlow.
inline constexpr int kMaxDims = 25;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  Shape(const int64_t* dims, int ndim) {
    if (ndim < 0 || ndim > kInlineDims) {
      InitSlow(dims, ndim);
      return;
    }
    if (ndim > 0) std::memcpy(inline_, dims, sizeof(int64_t) * static_cast<size_t>(ndim));
    ndim_ = ndim;
  }
  // `ndim` dims (0 <= ndim <= kMaxDims), each `value`.
  static Shape Filled(int ndim, int64_t value) {
    if (ndim < 0 || ndim > kInlineDims) return FilledSlow(ndim, value);
    Shape s;
    s.ndim_ = ndim;
    for (int i = 0; i < ndim; ++i) s.inline_[i] = value;
    return s;
  }
  Shape(const Shape& other) { CopyFrom(other); }
  Shape(Shape&& other) noexcept { MoveFrom(&other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) {
      Release();
      CopyFrom(other);
    }
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      Release();
      MoveFrom(&other);
    }
    return *this;
  }
  ~Shape() { Release(); }

  int64_t size() const { return ndim_; }
  int ndim() const { return ndim_; }
  // i must be below ndim().
  int64_t operator[](int64_t i) const { return data()[i]; }
  int64_t& operator[](int64_t i) { return data()[i]; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + ndim_; }
  // ndim() must be > 0.
  int64_t back() const { return data()[ndim_ - 1]; }
  const int64_t* data() const { return ndim_ <= kInlineDims ? inline_ : heap_; }
  int64_t* data() { return ndim_ <= kInlineDims ? inline_ : heap_; }
  // Product of the dims (1 for a 0-dim shape); INT64_MAX when it does not fit in int64.
  int64_t numel() const {
    const int64_t* d = data();
    int64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < ndim_; ++i) overflow |= __builtin_mul_overflow(n, d[i], &n);
    return overflow ? NumelSlow() : n;  // a zero dim after an overflow still makes 0
  }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  std::string str() const;
  void push_back(int64_t d);

  friend bool operator==(const Shape& a, const Shape& b);
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
  // The same dims as a std::vector (sizes or strides given the public API's way).
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) {
    return static_cast<size_t>(a.ndim_) == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<int64_t>& a, const Shape& b) { return b == a; }
  friend bool operator!=(const Shape& a, const std::vector<int64_t>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<int64_t>& a, const Shape& b) { return !(b == a); }

 private:
  // Up to this many dims live inside the object (a copy is a fixed 56-byte move); more go to a
  // heap array of kMaxDims. Tensors rarely have more, and small objects keep the per-op path and
  // each live tensor cheap.
  static constexpr int kInlineDims = 6;
  // Copies and moves of inline shapes are fixed-size copies, inline here: shapes are copied several
  // times per op.
  void CopyFrom(const Shape& other) {
    if (other.ndim_ > kInlineDims) {
      CopyFromHeap(other);
      return;
    }
    std::memcpy(inline_, other.inline_, sizeof(inline_));
    ndim_ = other.ndim_;
  }
  void CopyFromHeap(const Shape& other);
  void InitSlow(const int64_t* dims, int ndim);
  int64_t NumelSlow() const;
  static Shape FilledSlow(int ndim, int64_t value);
  void MoveFrom(Shape* other) noexcept {
    std::memcpy(inline_, other->inline_, sizeof(inline_));  // the heap pointer too, if any
    ndim_ = other->ndim_;
    other->ndim_ = 0;
  }
  void Release() noexcept {
    if (ndim_ > kInlineDims) delete[] heap_;
  }
  // Makes room for `ndim` dims (the object is empty: ndim_ == 0) and sets ndim_.
  void Resize(int ndim);

  int ndim_ = 0;
  union {
    int64_t inline_[kInlineDims] = {};
    int64_t* heap_;  // kMaxDims entries, when ndim_ > kInlineDims
  };
};

std::ostream& operator<<(std::ostream& os, const Shape& s);

// "(2,3)" style ("(3)" for one dim, "()" for none); also used for stride and size lists in errors.
std::string ToString(const int64_t* v, size_t n);
inline std::string ToString(const std::vector<int64_t>& v) { return ToString(v.data(), v.size()); }
template <class Alloc>
std::string ToString(const std::vector<int64_t, Alloc>& v) {
  return ToString(v.data(), v.size());
}

// The strides of a view, in elements, one per dim: kept in a Shape, so that a tensor's strides
// cost no heap allocation of their own.
using Strides = Shape;

// Row-major strides of a contiguous tensor of this shape; ContiguousStrides gives them as the
// std::vector that Tensor::stride() returns.
Strides RowMajorStrides(const Shape& shape);
std::vector<int64_t> ContiguousStrides(const Shape& shape);

}  // namespace ofl
