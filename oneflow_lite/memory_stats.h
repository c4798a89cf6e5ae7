// MemoryStats: the counters every caching pool keeps, per device.
#pragma once

#include <cstdint>

namespace ofl {

struct MemoryStats {
  int64_t allocated_bytes = 0;       // bytes in blocks of live tensors now (after rounding)
  int64_t reserved_bytes = 0;        // bytes in segments obtained from the backend now
  int64_t peak_allocated_bytes = 0;  // high-water mark of allocated_bytes
  int64_t peak_reserved_bytes = 0;   // high-water mark of reserved_bytes
  int64_t alloc_requests = 0;        // calls to allocate
  int64_t cache_hits = 0;            // requests served from a cached free block
  int64_t cache_misses = 0;          // requests that had to grow the pool by a new segment
  int64_t ooms = 0;                  // requests that ended in OutOfMemory
  // Bytes of dead tensors whose device work has not completed yet: counted free (not in
  // allocated_bytes) but still reserved, and not handed out again until that work is done. 0 after
  // sync().
  int64_t pending_free_bytes = 0;
};

}  // namespace ofl
