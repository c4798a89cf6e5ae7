// The CPU pool's backend (page-aligned memory from the C library) and the names of pool events.
#include <unistd.h>

#include <cstdlib>
#include <limits>

#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {

namespace {

constexpr size_t kPageSize = 4096;

// The most a single host segment may be. Asking the C library for more than the machine has can
// only fail, and under sanitizers an absurd request aborts instead of returning null.
size_t MaxHostAllocation() {
  static const size_t max_bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return std::numeric_limits<size_t>::max() / 4;
    return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  }();
  return max_bytes;
}

}  // namespace

void* CpuAllocatorBackend::Allocate(size_t bytes) {
  if (bytes == 0 || bytes > MaxHostAllocation()) return nullptr;
  void* p = nullptr;
  const size_t rounded = (bytes + kPageSize - 1) & ~(kPageSize - 1);
  if (posix_memalign(&p, kPageSize, rounded) != 0) return nullptr;
  return p;
}

void CpuAllocatorBackend::Free(void* ptr, size_t /*bytes*/) { std::free(ptr); }

const char* to_string(PoolEventKind kind) {
  switch (kind) {
    case PoolEventKind::kAlloc:
      return "alloc";
    case PoolEventKind::kFree:
      return "free";
    case PoolEventKind::kSegmentAlloc:
      return "segment_alloc";
    case PoolEventKind::kSegmentFree:
      return "segment_free";
  }
  return "unknown";
}

}  // namespace ofl::vm
