// What the caching pool reports (see pool_impl.h): its stats, a snapshot of its segments and
// blocks, the events an observer (the VM while tracing) is told, and the out-of-memory message.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "vm/allocator/pool_impl.h"

namespace ofl::vm {

namespace {

std::string FormatMiB(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f MiB", static_cast<double>(bytes) / kMiB);
  return buf;
}

}  // namespace

void CachingAllocator::Impl::Notify(PoolEventKind kind, const char* ptr, size_t size,
                                    size_t requested, bool hit, const char* owner) const {
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

void CachingAllocator::Impl::ThrowOutOfMemory(size_t bytes, const char* suffix) {
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

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  return impl_->stats;
}

void CachingAllocator::ResetPeakStats() {
  std::lock_guard<PoolMutex> lock(impl_->mu);
  impl_->stats.peak_allocated_bytes = impl_->stats.allocated_bytes;
  impl_->stats.peak_reserved_bytes = impl_->stats.reserved_bytes;
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
