// The caching memory pool behind every device. Free blocks sit in TLSF-style size-class bins (a
// two-level bitmap over intrusive free lists), so a cached Allocate/Free pair costs a mutex, a
// couple of bit scans and a handful of pointer writes: no tree, no heap call, no scan of the pool.
// Tiny blocks skip even that: they are slots of slabs, one bit each (vm/allocator/tiny_slabs.h).
#include "vm/allocator/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include <oneapi/tbb/mutex.h>

#include "oneflow_lite/error.h"
#include "vm/allocator/pool_blocks.h"
#include "vm/allocator/tiny_slabs.h"

namespace ofl::vm {

// oneTBB's mutex: an uncontended lock and unlock are one atomic exchange each (a pthread mutex
// costs several times that, twice per tensor), and a waiter spins briefly, then sleeps.
using PoolMutex = tbb::mutex;

using namespace pool_detail;  // NOLINT(google-build-using-namespace): this file's own details

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Requests up to kSmallRequest share 2 MiB segments; anything larger gets its own segment so small
// blocks never pin big ones.
constexpr size_t kSmallRequest = 1 * kMiB;
constexpr size_t kSmallSegment = 2 * kMiB;
constexpr size_t kLargeRound = 2 * kMiB;
// A large block is only split when the leftover is worth keeping as a block of its own; smaller
// leftovers stay attached (and counted) to the block.
constexpr size_t kLargeMinRemainder = 1 * kMiB;
constexpr size_t kSmallMinRemainder = kTinyBytes;
// Anything above this cannot be served: rounded to a segment size, it would not fit a block's size
// field (pool_detail::kMaxBlockBytes).
constexpr size_t kMaxRequest = (kMaxBlockBytes + 1) - kLargeRound;

constexpr size_t kBlocksPerChunk = 256;

inline size_t RoundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) & ~(multiple - 1);
}

// The size a request of `bytes` (at most kMaxRequest) is served with.
inline size_t RoundRequest(size_t bytes) {
  return RoundUp(bytes, bytes < kRoundBytes ? kTinyBytes : kRoundBytes);
}

std::string FormatMiB(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f MiB", static_cast<double>(bytes) / kMiB);
  return buf;
}

}  // namespace

namespace {

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

// A segment a closed pool kept (Close), listed where it stays reachable after its
// pool is gone (the list is never destroyed), so LeakSanitizer reports none of them.
void KeepForGood(void* base, size_t size) {
  static auto* mu = new std::mutex();
  static auto* kept = new std::vector<std::pair<void*, size_t>>();
  std::lock_guard<std::mutex> lock(*mu);
  kept->emplace_back(base, size);
}

}  // namespace

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
  void ReleaseAllSegments() {
    std::string failure;
    for (Segment* seg = std::exchange(segments, nullptr); seg != nullptr;) {
      std::unique_ptr<Segment> dead(std::exchange(seg, seg->next));
      ReturnSegment(dead->base, dead->size, &failure);
    }
    if (!failure.empty()) throw DeviceError(failure);
  }

  // The pool has forgotten the segment before deallocate is called: a backend whose deallocate
  // throws owns the memory from then on (extension.h), so nothing is ever deallocated twice. The
  // first failure is kept in *failure, to be thrown once every segment was tried.
  void ReturnSegment(char* base, size_t size, std::string* failure) {
    try {
      backend->Free(base, size);
    } catch (const std::exception& e) {
      if (!failure->empty()) return;
      *failure = "CachingAllocator on " + device_name + ": returning a segment of " +
                 std::to_string(size) + " bytes to the device failed: " + e.what() +
                 " (the pool forgot it: the backend owns it now)";
    }
  }

  // cached_only: serve the request from cached memory or return null (nothing counted, no backend
  // call, no error).
  Block* Allocate(size_t bytes, bool* cache_hit, const char* owner, bool inject_failure,
                  bool cached_only = false) {
    std::lock_guard<PoolMutex> lock(mu);
    if (cached_only) {
      if (closed || bytes == 0 || bytes > kMaxRequest) return nullptr;
    } else {
      if (closed) {
        throw Error("CachingAllocator on " + device_name +
                    ": the pool was closed (the runtime shut down)");
      }
      ++stats.alloc_requests;
      if (bytes == 0) {
        throw InvalidArgument("CachingAllocator::Allocate on " + device_name +
                              ": byte count must be > 0, got 0");
      }
      if (bytes > kMaxRequest) ThrowOutOfMemory(bytes);
      if (__builtin_expect(inject_failure, 0)) {
        // What a real failure does: no block fits, the cache is emptied for the retry, which fails.
        ReleaseCachedSegments();
        ThrowOutOfMemory(bytes, " (injected fault)");
      }
    }
    // Growing may need two metadata objects (segment block + split remainder); getting them first
    // means a failed refill leaves the pool untouched.
    if (spare == nullptr || spare->free_next == nullptr) RefillMetadata();

    size_t size = RoundRequest(bytes);
    const uint32_t owner_id = owner_names.Intern(owner);
    bool hit = true;
    Block* handle;
    char* ptr;
    if (TinySlabs::Fits(size)) {
      Slab* s = slabs.open[TinySlabs::Class(size)];
      if (s == nullptr) {
        slabs.ReserveRecord();  // before the backing is taken, so a failure leaks nothing
        Block* backing = TakeBlock(bytes, size * kSlabSlots, kSmallPool, cached_only, &hit);
        if (backing == nullptr) return nullptr;
        backing->allocated = true;
        s = slabs.Open(backing, size);
      }
      const int i = slabs.Take(s);
      s->owner[i] = static_cast<uint16_t>(owner_id);
      handle = SlotHandle(s, i);
      ptr = s->Slot(i);
    } else {
      Block* b = TakeBlock(bytes, size, size <= kSmallRequest ? kSmallPool : kLargePool,
                           cached_only, &hit);
      if (b == nullptr) return nullptr;
      b->allocated = true;
      b->owner = owner_id;
      handle = b;
      ptr = b->ptr;
      size = b->size;  // with a leftover too small to be a block of its own
    }

    if (cached_only) ++stats.alloc_requests;
    ++(hit ? stats.cache_hits : stats.cache_misses);
    stats.allocated_bytes += static_cast<int64_t>(size);
    stats.peak_allocated_bytes = std::max(stats.peak_allocated_bytes, stats.allocated_bytes);
    if (cache_hit != nullptr) *cache_hit = hit;
    if (__builtin_expect(static_cast<bool>(observer), 0)) {
      Notify(PoolEventKind::kAlloc, ptr, size, bytes, hit, owner_names.Name(owner_id));
    }
    return handle;
  }

  // A free block of `size` bytes (a multiple of kRoundBytes; more when the leftover is too small
  // to be a block of its own) out of the bins, split off a cached block (*hit = true) or a fresh
  // segment (*hit = false; never when cached_only: null instead). Not yet marked allocated.
  // `bytes` is the request, for the out-of-memory message.
  Block* TakeBlock(size_t bytes, size_t size, PoolKind kind, bool cached_only, bool* hit) {
    FreeBins& pool = bins[kind];
    Block* b = pool.Find(size);
    if (b == nullptr && CloseEmptySlabs()) b = pool.Find(size);
    *hit = b != nullptr;
    if (b != nullptr) {
      pool.Remove(b);
    } else if (cached_only) {
      return nullptr;
    } else {
      b = Grow(bytes, size, kind);
    }

    const size_t remainder = b->size - size;
    if (remainder >= (kind == kSmallPool ? kSmallMinRemainder : kLargeMinRemainder)) {
      Block* rest = TakeMetadata();
      rest->ptr = b->ptr + size;
      rest->size = remainder;
      rest->pool = kind;
      rest->allocated = false;
      rest->prev = b;
      rest->next = b->next;
      if (b->next != nullptr) b->next->prev = rest;
      b->next = rest;
      b->size = size;
      pool.Insert(rest);
    }
    return b;
  }

  void Free(Block* h) {
    std::lock_guard<PoolMutex> lock(mu);
    if (closed) return;  // Close kept its segment for good
    if (IsSlot(h)) {
      Slab* s = SlabOf(h);
      const int i = SlotOf(h);
      const uint64_t bit = uint64_t{1} << i;
      if ((s->free & bit) != 0) ThrowNotAllocated();
      const bool pending = (s->pending & bit) != 0;
      s->pending &= ~bit;
      CountFree(s->Slot(i), s->slot_bytes, pending, s->owner[i]);
      slabs.Put(s, i);
      return;
    }
    if (!h->allocated) ThrowNotAllocated();
    h->allocated = false;
    CountFree(h->ptr, h->size, h->pending_free, h->owner);
    h->pending_free = false;
    InsertMerged(h);
  }

  [[noreturn]] void ThrowNotAllocated() const {
    throw InvalidArgument("CachingAllocator::Free on " + device_name +
                          ": block is not allocated (double free?)");
  }

  // A block (or slot) goes back: its bytes leave allocated_bytes, or pending_free_bytes when its
  // tensor's death counted it free already (and told the observer then).
  void CountFree(const char* ptr, size_t size, bool pending, uint32_t owner_id) {
    if (pending) {
      stats.pending_free_bytes -= static_cast<int64_t>(size);
      return;
    }
    stats.allocated_bytes -= static_cast<int64_t>(size);
    if (__builtin_expect(static_cast<bool>(observer), 0)) {
      Notify(PoolEventKind::kFree, ptr, size, 0, false, owner_names.Name(owner_id));
    }
  }

  // Puts a free block into its pool's bins, merged with its free neighbours.
  void InsertMerged(Block* b) {
    FreeBins& pool = bins[b->pool];
    Block* prev = b->prev;
    if (prev != nullptr && !prev->allocated) {
      // Keep the lower block so a segment's first block object never changes.
      pool.Remove(prev);
      prev->size += b->size;
      prev->next = b->next;
      if (b->next != nullptr) b->next->prev = prev;
      ReturnMetadata(b);
      b = prev;
    }
    Block* next = b->next;
    if (next != nullptr && !next->allocated) {
      pool.Remove(next);
      b->size += next->size;
      b->next = next->next;
      if (next->next != nullptr) next->next->prev = b;
      ReturnMetadata(next);
    }
    pool.Insert(b);
  }

  // Returns every slab whose slots are all free to the bins, merged with its free neighbours.
  // Returns whether there was any.
  bool CloseEmptySlabs() {
    if (slabs.empty == 0) return false;
    for (Slab*& head : slabs.open) {
      Slab* s = head;
      while (s != nullptr) {
        Slab* next = s->next;
        if (s->free == kAllSlots) {
          Block* backing = slabs.Close(s);
          backing->allocated = false;
          InsertMerged(backing);
        }
        s = next;
      }
    }
    return true;
  }

  void MarkDead(Block* h) {
    std::lock_guard<PoolMutex> lock(mu);
    if (closed) return;
    const char* ptr;
    size_t size;
    uint32_t owner_id;
    if (IsSlot(h)) {
      Slab* s = SlabOf(h);
      const int i = SlotOf(h);
      const uint64_t bit = uint64_t{1} << i;
      if (((s->free | s->pending) & bit) != 0) ThrowNotInUse();
      s->pending |= bit;
      ptr = s->Slot(i);
      size = s->slot_bytes;
      owner_id = s->owner[i];
    } else {
      if (!h->allocated || h->pending_free) ThrowNotInUse();
      h->pending_free = true;
      ptr = h->ptr;
      size = h->size;
      owner_id = h->owner;
    }
    stats.allocated_bytes -= static_cast<int64_t>(size);
    stats.pending_free_bytes += static_cast<int64_t>(size);
    if (__builtin_expect(static_cast<bool>(observer), 0)) {
      Notify(PoolEventKind::kFree, ptr, size, 0, false, owner_names.Name(owner_id));
    }
  }

  [[noreturn]] void ThrowNotInUse() const {
    throw InvalidArgument("CachingAllocator::MarkDead on " + device_name +
                          ": block is not in use (marked twice?)");
  }

  // A block covering a fresh segment big enough for `size`; throws OutOfMemory when neither the
  // backend nor the limit allows one, even after the cache is emptied.
  Block* Grow(size_t bytes, size_t size, PoolKind kind) {
    size_t seg_size = kind == kSmallPool ? kSmallSegment : RoundUp(size, kLargeRound);
    auto seg = std::make_unique<Segment>();
    char* base = Reserve(seg_size);
    if (base == nullptr) {
      ReleaseCachedSegments();
      base = Reserve(seg_size);
    }
    if (base == nullptr && seg_size > size) {
      // A device (or a limit) smaller than the usual segment still serves what fits: a segment
      // of just the block's size.
      seg_size = size;
      base = Reserve(seg_size);
    }
    if (base == nullptr) ThrowOutOfMemory(bytes);

    Block* b = TakeMetadata();
    b->ptr = base;
    b->size = seg_size;
    b->pool = kind;
    b->allocated = false;
    b->prev = b->next = nullptr;
    seg->base = base;
    seg->size = seg_size;
    seg->pool = kind;
    seg->first = b;
    seg->next = segments;
    if (segments != nullptr) segments->prev = seg.get();
    segments = seg.release();
    stats.reserved_bytes += static_cast<int64_t>(seg_size);
    stats.peak_reserved_bytes = std::max(stats.peak_reserved_bytes, stats.reserved_bytes);
    if (__builtin_expect(static_cast<bool>(observer), 0)) {
      Notify(PoolEventKind::kSegmentAlloc, base, seg_size, 0, false, "");
    }
    return b;
  }

  // Backend memory for a segment, or null when the limit or the backend says no.
  char* Reserve(size_t seg_size) {
    if (limit > 0) {
      const uint64_t cap = static_cast<uint64_t>(limit);
      const uint64_t reserved = static_cast<uint64_t>(stats.reserved_bytes);
      if (reserved >= cap || seg_size > cap - reserved) return nullptr;
    }
    void* p = backend->Allocate(seg_size);
    if (p != nullptr && reinterpret_cast<uintptr_t>(p) % kAlignment != 0) {
      backend->Free(p, seg_size);
      throw DeviceError("CachingAllocator on " + device_name + ": backend returned a segment at " +
                        std::to_string(reinterpret_cast<uintptr_t>(p)) + " not aligned to " +
                        std::to_string(kAlignment) + " bytes");
    }
    return static_cast<char*>(p);
  }

  // Throws DeviceError after the loop when a deallocate threw (see ReturnSegment).
  void ReleaseCachedSegments() {
    CloseEmptySlabs();
    Segment* seg = segments;
    std::string failure;
    while (seg != nullptr) {
      Segment* next = seg->next;
      Block* first = seg->first;
      if (!first->allocated && first->next == nullptr) {
        bins[seg->pool].Remove(first);
        ReturnMetadata(first);
        stats.reserved_bytes -= static_cast<int64_t>(seg->size);
        if (__builtin_expect(static_cast<bool>(observer), 0)) {
          Notify(PoolEventKind::kSegmentFree, seg->base, seg->size, 0, false, "");
        }
        if (seg->prev != nullptr) seg->prev->next = seg->next;
        if (seg->next != nullptr) seg->next->prev = seg->prev;
        if (segments == seg) segments = seg->next;
        std::unique_ptr<Segment> dead(seg);
        ReturnSegment(dead->base, dead->size, &failure);
      }
      seg = next;
    }
    if (!failure.empty()) throw DeviceError(failure);
  }

  // Called with mu held, only when an observer is set.
  void Notify(PoolEventKind kind, const char* ptr, size_t size, size_t requested, bool hit,
              const char* owner) const {
    PoolEvent e;
    e.kind = kind;
    e.address = reinterpret_cast<uintptr_t>(ptr);
    e.bytes = size;
    e.requested = requested;
    e.cache_hit = hit;
    e.owner = owner;
    e.allocated_bytes = stats.allocated_bytes;
    e.reserved_bytes = stats.reserved_bytes;
    observer(e);
  }

  [[noreturn]] void ThrowOutOfMemory(size_t bytes, const char* suffix = "") {
    ++stats.ooms;
    CloseEmptySlabs();  // so the largest free block counts them
    const size_t largest = std::max(bins[kSmallPool].LargestFree(), bins[kLargePool].LargestFree());
    std::string msg = "out of memory on " + device_name + ": tried to allocate " +
                      std::to_string(bytes) + " bytes (" + FormatMiB(bytes) + "); allocated " +
                      std::to_string(stats.allocated_bytes) + " bytes, reserved " +
                      std::to_string(stats.reserved_bytes) + " bytes, largest free block " +
                      std::to_string(largest) + " bytes, ";
    if (stats.pending_free_bytes > 0) {
      msg += std::to_string(stats.pending_free_bytes) + " bytes pending free, ";
    }
    msg += limit > 0 ? "limit " + std::to_string(limit) + " bytes" : std::string("no limit");
    const std::string device_view = backend->MemoryInfo();
    if (!device_view.empty()) msg += ", " + device_view;
    msg += suffix;
    throw OutOfMemory(msg);
  }

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

CachingAllocator::CachingAllocator(Device device, std::unique_ptr<AllocatorBackend> backend,
                                   std::string name)
    : device_(device) {
  if (name.empty()) name = device_.str();
  if (backend == nullptr) {
    throw InvalidArgument("CachingAllocator on " + name + ": backend must not be null");
  }
  impl_ = std::make_unique<Impl>(std::move(name), std::move(backend));
}

CachingAllocator::~CachingAllocator() = default;

CachingAllocator::Block* CachingAllocator::Allocate(size_t bytes, bool* cache_hit,
                                                    const char* owner) {
  bool inject_failure = false;
  if (__builtin_expect(fail_countdown_.load(std::memory_order_relaxed) > 0, 0)) {
    // Exactly one request sees the count go from 1 to 0, however many threads allocate.
    int64_t left = fail_countdown_.load(std::memory_order_relaxed);
    while (left > 0 &&
           !fail_countdown_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
    }
    inject_failure = left == 1;
  }
  return impl_->Allocate(bytes, cache_hit, owner, inject_failure);
}

CachingAllocator::Block* CachingAllocator::TryAllocateCached(size_t bytes, const char* owner) {
  // An armed fault belongs to the request that Allocate counts.
  if (fail_countdown_.load(std::memory_order_relaxed) > 0) return nullptr;
  return impl_->Allocate(bytes, nullptr, owner, false, /*cached_only=*/true);
}

void CachingAllocator::SetFailAt(int64_t n) {
  if (n < 0) {
    throw InvalidArgument("CachingAllocator::SetFailAt on " + device_.str() +
                          ": n must be >= 0 (0 = off), got " + std::to_string(n));
  }
  fail_countdown_.store(n, std::memory_order_relaxed);
}

void CachingAllocator::Free(Block* block) {
  if (block == nullptr) return;
  impl_->Free(block);
}

void CachingAllocator::MarkDead(Block* block) {
  if (block == nullptr) return;
  impl_->MarkDead(block);
}

void* CachingAllocator::Data(const Block* block) {
  return IsSlot(block) ? SlabOf(block)->Slot(SlotOf(block)) : block->ptr;
}

size_t CachingAllocator::Size(const Block* block) {
  return IsSlot(block) ? SlabOf(block)->slot_bytes : block->size;
}

namespace {
// Derived from Block so that Data() and Size() read it as they read a pool's block.
struct ExternalBlock : CachingAllocator::Block {
  std::function<void()> on_release;
};
}  // namespace

CachingAllocator::Block* CachingAllocator::NewExternalBlock(void* data, size_t bytes,
                                                            std::function<void()> on_release) {
  auto* b = new ExternalBlock();
  b->ptr = static_cast<char*>(data);
  b->size = std::min(bytes, kMaxBlockBytes);
  b->allocated = 1;
  b->on_release = std::move(on_release);
  return b;
}

std::function<void()> CachingAllocator::DeleteExternalBlock(Block* block) noexcept {
  std::unique_ptr<ExternalBlock> b(static_cast<ExternalBlock*>(block));
  return std::move(b->on_release);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  return impl_->stats;
}

void CachingAllocator::ResetPeakStats() {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  impl_->stats.peak_allocated_bytes = impl_->stats.allocated_bytes;
  impl_->stats.peak_reserved_bytes = impl_->stats.reserved_bytes;
}

void CachingAllocator::Close() {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  if (impl_->closed) return;
  impl_->closed = true;
  std::exception_ptr failure;  // reported once the pool is closed all the same
  try {
    impl_->ReleaseCachedSegments();
  } catch (...) {
    failure = std::current_exception();
  }
  // What is left holds blocks in use, which a tensor, a DLPack capsule or a view may still read
  // after shutdown: kept for good, it goes back with the process. A block pending free counts as
  // in use, since only its Free (which never comes now) says the device is done with it.
  for (Segment* seg = std::exchange(impl_->segments, nullptr); seg != nullptr;) {
    std::unique_ptr<Segment> held(std::exchange(seg, seg->next));
    KeepForGood(held->base, held->size);
  }
  // The slabs' lists go (nothing may merge their blocks back any more); their records stay, since
  // a late Data() on a live tensor's slot reads its record.
  impl_->slabs.Forget();
  impl_->stats.allocated_bytes = 0;
  impl_->stats.reserved_bytes = 0;
  impl_->stats.pending_free_bytes = 0;
  if (failure) std::rethrow_exception(failure);
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  impl_->ReleaseCachedSegments();
}

void CachingAllocator::SetLimit(int64_t bytes) {
  if (bytes < 0) {
    throw InvalidArgument("set_memory_limit: limit for " + device_.str() +
                          " must be >= 0 bytes (0 means no limit), got " + std::to_string(bytes));
  }
  std::lock_guard<PoolMutex> lock(impl_->mu);
  impl_->limit = bytes;
}

int64_t CachingAllocator::limit() const {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  return impl_->limit;
}

void CachingAllocator::SetObserver(PoolObserver observer) {
  PoolObserver old;
  {
    std::lock_guard<PoolMutex> lock(impl_->mu);
    old = std::move(impl_->observer);
    impl_->observer = std::move(observer);
  }
  // `old` (and what it captured) dies outside the lock.
}

std::vector<SegmentInfo> CachingAllocator::Snapshot() const {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  // Shows free memory merged as the bins hold it, without the slabs that only wait for requests.
  impl_->CloseEmptySlabs();
  std::unordered_map<const Block*, const Slab*> slab_of;  // by backing block
  impl_->slabs.ForEachOpen([&](const Slab& s) { slab_of.emplace(s.backing, &s); });
  std::vector<SegmentInfo> result;
  for (Segment* seg = impl_->segments; seg != nullptr; seg = seg->next) {
    SegmentInfo info;
    info.address = reinterpret_cast<uintptr_t>(seg->base);
    info.size = seg->size;
    for (Block* b = seg->first; b != nullptr; b = b->next) {
      const auto slab = b->allocated ? slab_of.find(b) : slab_of.end();
      if (slab != slab_of.end()) {
        AppendSlots(*slab->second, impl_->owner_names, &info.blocks);
        continue;
      }
      BlockInfo block;
      block.address = reinterpret_cast<uintptr_t>(b->ptr);
      block.size = b->size;
      block.allocated = b->allocated && !b->pending_free;
      block.pending_free = b->pending_free;
      if (b->allocated) block.owner = impl_->owner_names.Name(b->owner);
      info.blocks.push_back(std::move(block));
    }
    result.push_back(std::move(info));
  }
  std::sort(result.begin(), result.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return result;
}

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
