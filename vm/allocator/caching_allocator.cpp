// The caching memory pool behind every device. Free blocks sit in TLSF-style size-class bins (a
// two-level bitmap over intrusive free lists), so a cached Allocate/Free pair costs a mutex, a
// couple of bit scans and a handful of pointer writes: no tree, no heap call, no scan of the pool.
// Tiny blocks skip even that: they are slots of slabs, one bit each (vm/allocator/tiny_slabs.h).
#include "vm/allocator/caching_allocator.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include "oneflow_lite/error.h"
#include "vm/allocator/pool_impl.h"

namespace ofl::vm {

CachingAllocator::Block* CachingAllocator::Impl::Allocate(size_t bytes, bool* cache_hit,
                                                          const char* owner, bool inject_failure,
                                                          bool cached_only) {
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
    Block* b =
        TakeBlock(bytes, size, size <= kSmallRequest ? kSmallPool : kLargePool, cached_only, &hit);
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

CachingAllocator::Block* CachingAllocator::Impl::TakeBlock(size_t bytes, size_t size, PoolKind kind,
                                                           bool cached_only, bool* hit) {
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

void CachingAllocator::Impl::Free(Block* h) {
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

void CachingAllocator::Impl::ThrowNotAllocated() const {
  throw InvalidArgument("CachingAllocator::Free on " + device_name +
                        ": block is not allocated (double free?)");
}

void CachingAllocator::Impl::CountFree(const char* ptr, size_t size, bool pending,
                                       uint32_t owner_id) {
  if (pending) {
    stats.pending_free_bytes -= static_cast<int64_t>(size);
    return;
  }
  stats.allocated_bytes -= static_cast<int64_t>(size);
  if (__builtin_expect(static_cast<bool>(observer), 0)) {
    Notify(PoolEventKind::kFree, ptr, size, 0, false, owner_names.Name(owner_id));
  }
}

void CachingAllocator::Impl::InsertMerged(Block* b) {
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

bool CachingAllocator::Impl::CloseEmptySlabs() {
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

void CachingAllocator::Impl::MarkDead(Block* h) {
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

void CachingAllocator::Impl::ThrowNotInUse() const {
  throw InvalidArgument("CachingAllocator::MarkDead on " + device_name +
                        ": block is not in use (marked twice?)");
}

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

}  // namespace ofl::vm
