// Where the caching pool's segments come from and go back to (see pool_impl.h): the backend, the
// limit on what the pool may reserve, emptying the cache, and closing the pool at shutdown.
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "vm/allocator/pool_impl.h"

namespace ofl::vm {

namespace {

// A segment a closed pool kept (Close), listed where it stays reachable after its
// pool is gone (the list is never destroyed), so LeakSanitizer reports none of them.
void KeepForGood(void* base, size_t size) {
  static auto* mu = new std::mutex();
  static auto* kept = new std::vector<std::pair<void*, size_t>>();
  std::lock_guard<std::mutex> lock(*mu);
  kept->emplace_back(base, size);
}

}  // namespace

void CachingAllocator::Impl::ReleaseAllSegments() {
  std::string failure;
  for (Segment* seg = std::exchange(segments, nullptr); seg != nullptr;) {
    std::unique_ptr<Segment> dead(std::exchange(seg, seg->next));
    ReturnSegment(dead->base, dead->size, &failure);
  }
  if (!failure.empty()) throw DeviceError(failure);
}

void CachingAllocator::Impl::ReturnSegment(char* base, size_t size, std::string* failure) {
  try {
    backend->Free(base, size);
  } catch (const std::exception& e) {
    if (!failure->empty()) return;
    *failure = "CachingAllocator on " + device_name + ": returning a segment of " +
               std::to_string(size) + " bytes to the device failed: " + e.what() +
               " (the pool forgot it: the backend owns it now)";
  }
}

CachingAllocator::Block* CachingAllocator::Impl::Grow(size_t bytes, size_t size, PoolKind kind) {
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

char* CachingAllocator::Impl::Reserve(size_t seg_size) {
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

void CachingAllocator::Impl::ReleaseCachedSegments() {
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

}  // namespace ofl::vm
