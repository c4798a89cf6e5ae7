// The host memory of the arrays Tensor.numpy() returns. A fresh allocation of many MiB is mapped
// by the kernel page by page as it is first written, and for a read of a large tensor those page
// faults cost more than the copy itself. So the memory of a large array goes back to a small cache
// here when the array dies, still mapped, and the next numpy() of that size takes it again. The
// cache belongs to the extension, not to the runtime's pools: an array stays valid after
// ofl.shutdown(), and its memory never counts as a device's.
#include <cstdlib>
#include <map>
#include <mutex>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

constexpr size_t kPage = 4096;
// Buffers of at least this size are kept when their array dies (smaller ones are cheap to map).
constexpr size_t kCachedMin = size_t{1} << 20;
// At most this many bytes are kept; a buffer given back beyond it is freed.
constexpr size_t kCacheLimit = size_t{256} << 20;

struct Cache {
  std::mutex mu;
  std::multimap<size_t, void*> free;  // by size
  size_t bytes = 0;
};

Cache& TheCache() {
  static Cache* cache = new Cache;  // never destroyed: arrays may die during the exit
  return *cache;
}

size_t Rounded(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

struct Buffer {
  void* data;
  size_t bytes;  // rounded
};

}  // namespace

void* TakeHostMemory(size_t bytes, size_t* rounded) {
  const size_t n = Rounded(bytes == 0 ? 1 : bytes);
  void* p = nullptr;
  if (n >= kCachedMin) {
    Cache& c = TheCache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free.find(n);
    if (it != c.free.end()) {
      p = it->second;
      c.bytes -= n;
      c.free.erase(it);
    }
  }
  if (p == nullptr && posix_memalign(&p, kPage, n) != 0) throw std::bad_alloc();
  *rounded = n;
  return p;
}

void GiveBackHostMemory(void* data, size_t rounded) noexcept {
  if (rounded >= kCachedMin) {
    Cache& c = TheCache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.bytes + rounded <= kCacheLimit) {
      c.free.emplace(rounded, data);
      c.bytes += rounded;
      return;
    }
  }
  std::free(data);
}

nb::capsule HostMemoryCapsule(void* data, size_t rounded) {
  auto* buf = new Buffer{data, rounded};
  return nb::capsule(buf, [](void* b) noexcept {
    auto* buf = static_cast<Buffer*>(b);
    GiveBackHostMemory(buf->data, buf->bytes);
    delete buf;
  });
}

void EmptyHostBufferCache() {
  Cache& c = TheCache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& [size, p] : c.free) std::free(p);
  c.free.clear();
  c.bytes = 0;
}

size_t HostBufferCacheBytes() {
  Cache& c = TheCache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.bytes;
}

}  // namespace ofl::python
