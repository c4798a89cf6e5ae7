// Copies into outputs too large to stay in cache, with stores that bypass it (x86's non-temporal
// stores). A store to a line that is not cached first reads the line (read-for-ownership), so a
// plain copy into a cold output moves each output byte over the memory bus twice; streaming stores
// write whole lines without reading them, and do not evict the cache's useful lines (the source
// run, most of all). On other targets these are a plain memcpy.
//
// Streaming stores are weakly ordered: a thread that wrote with StreamBytes calls StreamFence
// before anything tells another thread the bytes are ready (the end of its parallel chunk).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ofl::kernels::cpu {

// Outputs of at least this many bytes are written with StreamBytes by the kernels that can: the
// size of a server's whole last-level cache, so whatever the output's consumer could still have
// found in cache is small next to what a plain copy would have pushed out.
constexpr int64_t kStreamBytes = int64_t{32} << 20;

// memcpy(dst, src, n) for non-overlapping ranges; the 16-byte-aligned middle of dst is written
// with streaming stores, the unaligned head and tail with plain ones.
inline void StreamBytes(void* dst_ptr, const void* src_ptr, int64_t n) {
  char* dst = static_cast<char*>(dst_ptr);
  const char* src = static_cast<const char*>(src_ptr);
#if defined(__SSE2__)
  if (n >= 64) {
    const int64_t head = static_cast<int64_t>((0 - reinterpret_cast<uintptr_t>(dst)) & 15);
    std::memcpy(dst, src, static_cast<size_t>(head));
    dst += head;
    src += head;
    n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
    }
  }
#endif
  std::memcpy(dst, src, static_cast<size_t>(n));
}

// std::fill_n(dst, n, value) for T of 1, 2, 4 or 8 bytes, dst aligned to sizeof(T); the
// 16-byte-aligned middle is written with streaming stores.
template <class T>
inline void StreamFill(T* dst, T value, int64_t n) {
  static_assert(16 % sizeof(T) == 0, "a 16-byte store must hold whole elements");
#if defined(__SSE2__)
  constexpr int64_t kPer16 = static_cast<int64_t>(16 / sizeof(T));
  if (n >= 8 * kPer16) {
    int64_t head = static_cast<int64_t>(((0 - reinterpret_cast<uintptr_t>(dst)) & 15) / sizeof(T));
    for (; head > 0; --head, --n) *dst++ = value;
    T lane[kPer16];
    for (T& x : lane) x = value;
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lane));
    for (; n >= 4 * kPer16; n -= 4 * kPer16, dst += 4 * kPer16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + kPer16), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 2 * kPer16), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 3 * kPer16), v);
    }
  }
#endif
  for (; n > 0; --n) *dst++ = value;
}

// Orders this thread's earlier StreamBytes stores before its later stores.
inline void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace ofl::kernels::cpu
