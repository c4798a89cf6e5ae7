// MemoryStats: the counters every caching pool keeps, per device.
#pragma once

#include <cstdint>

namespace ofl {

struct MemoryStats {
  int64_t allocated_bytes = 0;       // bytes in blocks handed out now (after rounding)
  int64_t reserved_bytes = 0;        // bytes in segments obtained from the backend now
  int64_t peak_allocated_bytes = 0;  // high-water mark of allocated_bytes
  int64_t peak_reserved_bytes = 0;   // high-water mark of reserved_bytes
  int64_t alloc_requests = 0;        // calls to allocate
  int64_t cache_hits = 0;            // requests served from a cached free block
  int64_t cache_misses = 0;          // requests that had to grow the pool by a new segment
  int64_t ooms = 0;                  // requests that ended in OutOfMemory
};

}  // namespace ofl
