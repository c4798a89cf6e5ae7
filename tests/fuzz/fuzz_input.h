// Byte-string decoding shared by the fuzzers: reads small integers, "interesting" int64 values
// (0, 1, -1, small, powers of two, values near the int64 limits) and dim counts from the fuzzer's
// input. Reading past the end yields zeros, so every input decodes to something.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace ofl_fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Uniform-ish in [0, n).
  int64_t Below(int64_t n) { return n <= 1 ? 0 : static_cast<int64_t>(Byte()) % n; }
  bool Flip() { return Byte() & 1; }

  uint64_t Raw64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return v;
  }

  // A size-like value: mostly small, sometimes 0/1/-1, negative, a power of two or close to the
  // int64 limits.
  int64_t Value() {
    const uint8_t sel = Byte();
    const int64_t kMax = std::numeric_limits<int64_t>::max();
    const int64_t kMin = std::numeric_limits<int64_t>::min();
    switch (sel % 16) {
      case 0:
        return 0;
      case 1:
      case 2:
        return 1;
      case 3:
        return -1;
      case 4:
        return -static_cast<int64_t>(Byte() % 8) - 2;
      case 5:
        return int64_t{1} << (Byte() % 63);
      case 6:
        return kMax - static_cast<int64_t>(Byte() % 4);
      case 7:
        return kMin + static_cast<int64_t>(Byte() % 4);
      case 8:
        return static_cast<int64_t>(Raw64());
      case 9:
        return (int64_t{1} << (Byte() % 32)) + static_cast<int64_t>(Byte() % 3) - 1;
      default:
        return static_cast<int64_t>(sel >> 4) % 6;  // 0..5, the common case
    }
  }

  // A dim count: 0..6 usually, sometimes up to 26 (one past kMaxDims).
  int64_t Rank() {
    const uint8_t b = Byte();
    if (b >= 248) return 20 + (b - 248);  // 20..27
    return b % 7;
  }

  std::vector<int64_t> Values(int64_t n) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = Value();
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline std::string Str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (int64_t x : v) s += std::to_string(x) + ",";
  return s + ")";
}

// Prints the failed check and aborts, which libFuzzer reports as a crash and saves the input.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "FUZZ CHECK FAILED: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// ---- Reference shape rules shared by both fuzzers (written here, not taken from the library) ----
using Dims = std::vector<int64_t>;
using i128 = __int128;
constexpr i128 kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxRankRef = 25;  // the library's documented limit (OneFlow's)

// Product of dims (all >= 0) saturated just above int64's range; 0 when any dim is 0.
inline i128 SatProduct(const Dims& d) {
  for (int64_t x : d) {
    if (x == 0) return 0;
  }
  i128 p = 1;
  for (int64_t x : d) {
    p *= x;
    if (p > kI64Max) p = kI64Max + 1;
  }
  return p;
}

// The reference for CheckShape: rank <= 25, no negative dim, numel * element_size fits int64.
inline bool ShapeOk(const Dims& d, size_t es) {
  if (static_cast<int64_t>(d.size()) > kMaxRankRef) return false;
  for (int64_t x : d) {
    if (x < 0) return false;
  }
  return SatProduct(d) * static_cast<i128>(es) <= kI64Max;
}

}  // namespace ofl_fuzz

#define FUZZ_CHECK(cond, msg)                                                               \
  do {                                                                                      \
    if (!(cond))                                                                            \
      ::ofl_fuzz::Fail(std::string(#cond) + " at line " + std::to_string(__LINE__) + ": " + \
                       std::string(msg));                                                   \
  } while (0)
