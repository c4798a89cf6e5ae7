// Shape: the int64 sizes of a tensor, stored inline (at most kMaxDims) so that copying one never
// touches the heap on the per-op path.
#pragma once

#include <array>
#include <cstdint>
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
  Shape(const int64_t* dims, int ndim);

  int64_t size() const { return ndim_; }
  int ndim() const { return ndim_; }
  int64_t operator[](int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int64_t i) { return dims_[static_cast<size_t>(i)]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + ndim_; }
  const int64_t* data() const { return dims_.data(); }
  // Product of the dims (1 for a 0-dim shape); INT64_MAX when it does not fit in int64.
  int64_t numel() const;
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  std::string str() const;
  void push_back(int64_t d);

  friend bool operator==(const Shape& a, const Shape& b);
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::array<int64_t, kMaxDims> dims_{};
  int ndim_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Shape& s);

// "(2,3,)" style, the way OneFlow prints shapes; also used for stride and size lists in errors.
std::string ToString(const int64_t* v, size_t n);
inline std::string ToString(const std::vector<int64_t>& v) { return ToString(v.data(), v.size()); }
template <class Alloc>
std::string ToString(const std::vector<int64_t, Alloc>& v) {
  return ToString(v.data(), v.size());
}

// Row-major strides of a contiguous tensor of this shape.
std::vector<int64_t> ContiguousStrides(const Shape& shape);

}  // namespace ofl
