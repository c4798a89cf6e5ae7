// StreamBytes and StreamFill (kernels/cpu/stream_copy.h), the streaming-store copy and fill of the
// CPU kernels' large outputs, against memcpy and std::fill_n: every destination misalignment within
// 16 bytes, every length around the 64-byte loop's edges, and no byte written outside the range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/stream_copy.h"

namespace ofl::kernels::cpu {
namespace {

constexpr int64_t kGuard = 64;

std::vector<int64_t> Lengths() {
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 200; ++n) lengths.push_back(n);
  for (int64_t n : {255, 256, 257, 1000, 4096, 4099}) lengths.push_back(n);
  return lengths;
}

TEST(StreamCopyTest, StreamBytesEqualsMemcpyAtEveryAlignment) {
  std::mt19937_64 rng(21);
  for (int64_t dst_shift = 0; dst_shift < 16; ++dst_shift) {
    for (int64_t src_shift : {int64_t{0}, int64_t{5}}) {
      for (int64_t n : Lengths()) {
        SCOPED_TRACE("dst +" + std::to_string(dst_shift) + ", src +" + std::to_string(src_shift) +
                     ", " + std::to_string(n) + " bytes");
        alignas(64) static uint8_t src[4200 + 16];
        alignas(64) static uint8_t got[4200 + 2 * kGuard + 16];
        alignas(64) static uint8_t want[sizeof(got)];
        for (uint8_t& b : src) b = static_cast<uint8_t>(rng());
        for (size_t i = 0; i < sizeof(got); ++i) got[i] = want[i] = static_cast<uint8_t>(rng());
        std::memcpy(want + kGuard + dst_shift, src + src_shift, static_cast<size_t>(n));
        StreamBytes(got + kGuard + dst_shift, src + src_shift, n);
        StreamFence();
        ASSERT_EQ(std::memcmp(got, want, sizeof(got)), 0);
      }
    }
  }
}

template <class T>
void CheckStreamFill() {
  SCOPED_TRACE(std::to_string(sizeof(T)) + "-byte elements");
  std::mt19937_64 rng(22 + sizeof(T));
  for (int64_t shift = 0; shift < 16; shift += static_cast<int64_t>(sizeof(T))) {
    for (int64_t n : Lengths()) {
      SCOPED_TRACE("dst +" + std::to_string(shift) + " bytes, " + std::to_string(n) + " elements");
      alignas(64) static T got[4200 + 64];
      alignas(64) static T want[4200 + 64];
      for (size_t i = 0; i < 4200 + 64; ++i) got[i] = want[i] = static_cast<T>(rng());
      const T value = static_cast<T>(rng());
      const int64_t first = 8 + shift / static_cast<int64_t>(sizeof(T));
      std::fill_n(want + first, n, value);
      StreamFill(got + first, value, n);
      StreamFence();
      ASSERT_EQ(std::memcmp(got, want, sizeof(got)), 0);
    }
  }
}

TEST(StreamCopyTest, StreamFillEqualsFillAtEveryAlignmentAndElementSize) {
  CheckStreamFill<uint8_t>();
  CheckStreamFill<uint16_t>();
  CheckStreamFill<uint32_t>();
  CheckStreamFill<uint64_t>();
}

}  // namespace
}  // namespace ofl::kernels::cpu
