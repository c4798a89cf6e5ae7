// Element types: the DType enum, element sizes, and the 2-byte float16 / bfloat16 host storage
// types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ofl {

enum class DType {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64
};

inline constexpr int kNumDTypes = 10;

// Bytes per element; 0 for a value that is not a DType enumerator (one cast from an integer).
constexpr size_t element_size(DType dtype) {
  // In enumerator order.
  constexpr size_t kSizes[kNumDTypes] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  const auto i = static_cast<unsigned>(dtype);
  return i < static_cast<unsigned>(kNumDTypes) ? kSizes[i] : 0;
}
std::string to_string(DType dtype);

// float16, bfloat16, float32 and float64 (PyTorch's torch.is_floating_point).
constexpr bool is_floating_point(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

// The dtype both a and b convert to without losing their kind, as torch.promote_types: bool
// yields to any other; uint8 with int8 gives int16; integers give the wider; an integer with a
// float gives the float; float16 with bfloat16 gives float32; floats give the wider.
DType promote_types(DType a, DType b);
// Whether an op's result of dtype `from` may be written into a tensor of dtype `to`
// (torch.can_cast, the in-place ops' rule): not a float into an integer or bool, not an integer
// into bool.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  return !(from != DType::kBool && to == DType::kBool);
}

// IEEE 754 binary16 storage with round-to-nearest-even conversion from float.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  float16(float f);        // NOLINT(google-explicit-constructor): mirrors the arithmetic types
  operator float() const;  // NOLINT(google-explicit-constructor)
  static float16 from_bits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

// bfloat16: the upper half of a float32, rounded to nearest even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float f);        // NOLINT(google-explicit-constructor)
  operator float() const {  // NOLINT(google-explicit-constructor)
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  }
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

inline bool operator==(float16 a, float16 b) { return a.bits == b.bits; }
inline bool operator==(bfloat16 a, bfloat16 b) { return a.bits == b.bits; }

// Maps a C++ element type to its DType (used by tensor<T>() and to_vector<T>()).
template <class T>
struct DTypeOf;
#define OFL_DTYPE_OF(T, D)                   \
  template <>                                \
  struct DTypeOf<T> {                        \
    static constexpr DType value = DType::D; \
  };
OFL_DTYPE_OF(bool, kBool)
OFL_DTYPE_OF(uint8_t, kUInt8)
OFL_DTYPE_OF(int8_t, kInt8)
OFL_DTYPE_OF(int16_t, kInt16)
OFL_DTYPE_OF(int32_t, kInt32)
OFL_DTYPE_OF(int64_t, kInt64)
OFL_DTYPE_OF(float16, kFloat16)
OFL_DTYPE_OF(bfloat16, kBFloat16)
OFL_DTYPE_OF(float, kFloat32)
OFL_DTYPE_OF(double, kFloat64)
#undef OFL_DTYPE_OF

}  // namespace ofl
