// The caching pool's state behind CachingAllocator (caching_allocator.h), private to
// vm/allocator. Its code is in three files, one concern each: caching_allocator.cpp (the hot path:
// bins, split, merge, slots, and the public calls that take it), pool_segments.cpp (where segments
// come from and go back to: the backend, the limit, close), pool_report.cpp (stats, snapshots,
// observer events and the out-of-memory message). The metadata arena (spare Block objects) is
// here, inline.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/tbb/mutex.h>

#include "vm/allocator/caching_allocator.h"
#include "vm/allocator/pool_blocks.h"
#include "vm/allocator/tiny_slabs.h"

namespace ofl::vm {

// oneTBB's mutex: an uncontended lock and unlock are one atomic exchange each (a pthread mutex
// costs several times that, twice per tensor), and a waiter spins briefly, then sleeps.
using PoolMutex = tbb::mutex;

namespace pool_detail {

inline constexpr size_t kMiB = size_t{1} << 20;

// Requests up to kSmallRequest share 2 MiB segments; anything larger gets its own segment so small
// blocks never pin big ones.
inline constexpr size_t kSmallRequest = 1 * kMiB;
inline constexpr size_t kSmallSegment = 2 * kMiB;
inline constexpr size_t kLargeRound = 2 * kMiB;
// A large block is only split when the leftover is worth keeping as a block of its own; smaller
// leftovers stay attached (and counted) to the block.
inline constexpr size_t kLargeMinRemainder = 1 * kMiB;
inline constexpr size_t kSmallMinRemainder = kTinyBytes;
// Anything above this cannot be served: rounded to a segment size, it would not fit a block's size
// field (pool_detail::kMaxBlockBytes).
inline constexpr size_t kMaxRequest = (kMaxBlockBytes + 1) - kLargeRound;

inline constexpr size_t kBlocksPerChunk = 256;

inline size_t RoundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) & ~(multiple - 1);
}

// The size a request of `bytes` (at most kMaxRequest) is served with.
inline size_t RoundRequest(size_t bytes) {
  return RoundUp(bytes, bytes < kRoundBytes ? kTinyBytes : kRoundBytes);
}

struct Segment {
  char* base = nullptr;
  size_t size = 0;
  PoolKind pool = kSmallPool;
  // The lowest-address block. Splits keep the front part and merges keep the lower block, so this
  // object stays the segment's first block for the segment's whole life.
  Block* first = nullptr;
  Segment* prev = nullptr;
  Segment* next = nullptr;
};

}  // namespace pool_detail

// Only the allocator's own .cpp files include this header.
using namespace pool_detail;  // NOLINT(google-build-using-namespace)

struct CachingAllocator::Impl {
  Impl(std::string device_name, std::unique_ptr<AllocatorBackend> backend)
      : device_name(std::move(device_name)), backend(std::move(backend)) {}

  ~Impl() {
    try {
      ReleaseAllSegments();
    } catch (const std::exception&) {  // the backend owns what it failed to take back
    }
  }

  // Every segment back to the backend, blocks in use included (destroyed without Close).
  void ReleaseAllSegments();

  // The pool has forgotten the segment before deallocate is called: a backend whose deallocate
  // throws owns the memory from then on (extension.h), so nothing is ever deallocated twice. The
  // first failure is kept in *failure, to be thrown once every segment was tried.
  void ReturnSegment(char* base, size_t size, std::string* failure);

  // cached_only: serve the request from cached memory or return null (nothing counted, no backend
  // call, no error).
  Block* Allocate(size_t bytes, bool* cache_hit, const char* owner, bool inject_failure,
                  bool cached_only = false);

  // A free block of `size` bytes (a multiple of kRoundBytes; more when the leftover is too small
  // to be a block of its own) out of the bins, split off a cached block (*hit = true) or a fresh
  // segment (*hit = false; never when cached_only: null instead). Not yet marked allocated.
  // `bytes` is the request, for the out-of-memory message.
  Block* TakeBlock(size_t bytes, size_t size, PoolKind kind, bool cached_only, bool* hit);

  void Free(Block* h);

  [[noreturn]] void ThrowNotAllocated() const;

  // A block (or slot) goes back: its bytes leave allocated_bytes, or pending_free_bytes when its
  // tensor's death counted it free already (and told the observer then).
  void CountFree(const char* ptr, size_t size, bool pending, uint32_t owner_id);

  // Puts a free block into its pool's bins, merged with its free neighbours.
  void InsertMerged(Block* b);

  // Returns every slab whose slots are all free to the bins, merged with its free neighbours.
  // Returns whether there was any.
  bool CloseEmptySlabs();

  void MarkDead(Block* h);

  [[noreturn]] void ThrowNotInUse() const;

  // A block covering a fresh segment big enough for `size`; throws OutOfMemory when neither the
  // backend nor the limit allows one, even after the cache is emptied.
  Block* Grow(size_t bytes, size_t size, PoolKind kind);

  // Backend memory for a segment, or null when the limit or the backend says no.
  char* Reserve(size_t seg_size);

  // Throws DeviceError after the loop when a deallocate threw (see ReturnSegment).
  void ReleaseCachedSegments();

  // Called with mu held, only when an observer is set.
  void Notify(PoolEventKind kind, const char* ptr, size_t size, size_t requested, bool hit,
              const char* owner) const;

  [[noreturn]] void ThrowOutOfMemory(size_t bytes, const char* suffix = "");

  Block* TakeMetadata() {
    Block* b = spare;
    spare = b->free_next;
    b->free_next = nullptr;
    return b;
  }

  void ReturnMetadata(Block* b) {
    b->prev = b->next = b->free_prev = nullptr;
    b->free_next = spare;
    spare = b;
  }

  void RefillMetadata() {
    chunks.push_back(std::make_unique<Block[]>(kBlocksPerChunk));
    Block* chunk = chunks.back().get();
    for (size_t i = 0; i < kBlocksPerChunk; ++i) {
      chunk[i].free_next = i + 1 < kBlocksPerChunk ? &chunk[i + 1] : spare;
    }
    spare = chunk;
  }

  const std::string device_name;
  std::unique_ptr<AllocatorBackend> backend;
  mutable PoolMutex mu;
  // Everything below is guarded by mu.
  MemoryStats stats;
  int64_t limit = 0;
  FreeBins bins[2];
  TinySlabs slabs;  // where tiny blocks come from
  OwnerNames owner_names;
  Segment* segments = nullptr;  // every live segment, newest first
  Block* spare = nullptr;       // unused metadata objects
  bool closed = false;          // Close() ran: no more allocations, frees are no-ops
  std::vector<std::unique_ptr<Block[]>> chunks;
  PoolObserver observer;  // empty unless someone (the VM while tracing) watches this pool
};

}  // namespace ofl::vm
