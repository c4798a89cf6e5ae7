// The caching memory pool behind every device. Free blocks sit in TLSF-style size-class bins (a
// two-level bitmap over intrusive free lists), so a cached Allocate/Free pair costs a mutex, a
// couple of bit scans and a handful of pointer writes: no tree, no heap call, no scan of the pool.
#include "vm/allocator/caching_allocator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "oneflow_lite/error.h"

namespace ofl::vm {

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Requests below kRoundBytes are rounded to kTinyBytes (size classes of 64 bytes, so a 48-byte
// tensor holds 64, not 512); larger ones to kRoundBytes, which keeps the bins of everyday sizes
// few. Every block starts at a multiple of kTinyBytes inside a page-aligned segment (= kAlignment).
constexpr int kBinShift = 6;
constexpr size_t kTinyBytes = size_t{1} << kBinShift;
constexpr size_t kRoundBytes = 512;
// Requests up to kSmallRequest share 2 MiB segments; anything larger gets its own segment so small
// blocks never pin big ones.
constexpr size_t kSmallRequest = 1 * kMiB;
constexpr size_t kSmallSegment = 2 * kMiB;
constexpr size_t kLargeRound = 2 * kMiB;
// A large block is only split when the leftover is worth keeping as a block of its own; smaller
// leftovers stay attached (and counted) to the block.
constexpr size_t kLargeMinRemainder = 1 * kMiB;
constexpr size_t kSmallMinRemainder = kTinyBytes;
// Anything above this cannot even be rounded to a segment size without overflowing.
constexpr size_t kMaxRequest = std::numeric_limits<size_t>::max() & ~(kLargeRound - 1);

constexpr size_t kPageSize = 4096;

// Second-level bins per power of two: bins are at most ~3% wide, so the rounded-up search wastes
// little, and one 32-bit word per first level holds the second-level bitmap.
constexpr int kSlLog2 = 5;
constexpr int kSlCount = 1 << kSlLog2;
constexpr int kFlCount = 64;
// How many blocks of the request's own bin are looked at before settling for a bigger bin. Bounded
// so that a bin full of slightly-too-small blocks cannot make a lookup linear.
constexpr int kBinScanLimit = 8;

constexpr size_t kOwnerCapacity = 48;  // owner names are truncated to fit, including the NUL
constexpr size_t kBlocksPerChunk = 256;

enum PoolKind : uint8_t { kSmallPool = 0, kLargePool = 1 };

inline size_t RoundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) & ~(multiple - 1);
}

static_assert(kTinyBytes % CachingAllocator::kAlignment == 0, "blocks must stay aligned");

// The size a request of `bytes` (at most kMaxRequest) is served with.
inline size_t RoundRequest(size_t bytes) {
  return RoundUp(bytes, bytes < kRoundBytes ? kTinyBytes : kRoundBytes);
}

// Maps a size (in kTinyBytes units) to its bin. Sizes below kSlCount units get one bin each;
// above, each power of two [2^l, 2^(l+1)) is cut into kSlCount equal bins.
inline void MapToBin(size_t units, int* fl, int* sl) {
  if (units < static_cast<size_t>(kSlCount)) {
    *fl = 0;
    *sl = static_cast<int>(units);
    return;
  }
  const int log2 = 63 - __builtin_clzll(units);
  *fl = log2 - kSlLog2 + 1;
  *sl = static_cast<int>(units >> (log2 - kSlLog2)) - kSlCount;
}

std::string FormatMiB(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f MiB", static_cast<double>(bytes) / kMiB);
  return buf;
}

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

struct CachingAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  // Address-order neighbours inside the same segment, for merging.
  Block* prev = nullptr;
  Block* next = nullptr;
  // Links in a bin's free list; free_next also threads the metadata free list.
  Block* free_prev = nullptr;
  Block* free_next = nullptr;
  bool allocated = false;
  // Allocated but already counted free: its tensor died while device work using it was still
  // pending (MarkDead); it returns to the bins at Free, once that work completed.
  bool pending_free = false;
  PoolKind pool = kSmallPool;
  char owner[kOwnerCapacity] = {};
};

namespace {

using Block = CachingAllocator::Block;

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

// One pool's free blocks, binned by size.
struct FreeBins {
  uint64_t fl_bitmap = 0;
  uint32_t sl_bitmap[kFlCount] = {};
  Block* heads[kFlCount][kSlCount] = {};

  void Insert(Block* b) {
    int fl, sl;
    MapToBin(b->size >> kBinShift, &fl, &sl);
    Block* head = heads[fl][sl];
    b->free_prev = nullptr;
    b->free_next = head;
    if (head != nullptr) head->free_prev = b;
    heads[fl][sl] = b;
    fl_bitmap |= uint64_t{1} << fl;
    sl_bitmap[fl] |= uint32_t{1} << sl;
  }

  void Remove(Block* b) {
    if (b->free_prev != nullptr) {
      b->free_prev->free_next = b->free_next;
    } else {
      int fl, sl;
      MapToBin(b->size >> kBinShift, &fl, &sl);
      heads[fl][sl] = b->free_next;
      if (b->free_next == nullptr) {
        sl_bitmap[fl] &= ~(uint32_t{1} << sl);
        if (sl_bitmap[fl] == 0) fl_bitmap &= ~(uint64_t{1} << fl);
      }
    }
    if (b->free_next != nullptr) b->free_next->free_prev = b->free_prev;
    b->free_prev = b->free_next = nullptr;
  }

  // A free block of at least `size` bytes, close to the smallest such block, or null.
  Block* Find(size_t size) const {
    int fl, sl;
    MapToBin(size >> kBinShift, &fl, &sl);
    // The request's own bin may hold blocks both smaller and larger than it; a short look there
    // finds exact-size holes that the rounded-up search below would skip.
    int scanned = 0;
    for (Block* b = heads[fl][sl]; b != nullptr && scanned < kBinScanLimit;
         b = b->free_next, ++scanned) {
      if (b->size >= size) return b;
    }
    // Every block in a later bin is larger than anything in this one.
    uint32_t sl_map = sl + 1 < kSlCount ? sl_bitmap[fl] & (~uint32_t{0} << (sl + 1)) : 0;
    if (sl_map == 0) {
      const uint64_t fl_map = fl + 1 < kFlCount ? fl_bitmap & (~uint64_t{0} << (fl + 1)) : 0;
      if (fl_map == 0) return nullptr;
      fl = __builtin_ctzll(fl_map);
      sl_map = sl_bitmap[fl];
    }
    return heads[fl][__builtin_ctz(sl_map)];
  }

  size_t LargestFree() const {
    if (fl_bitmap == 0) return 0;
    const int fl = 63 - __builtin_clzll(fl_bitmap);
    const int sl = 31 - __builtin_clz(sl_bitmap[fl]);
    size_t largest = 0;
    for (Block* b = heads[fl][sl]; b != nullptr; b = b->free_next)
      largest = std::max(largest, b->size);
    return largest;
  }
};

}  // namespace

struct CachingAllocator::Impl {
  Impl(std::string device_name, std::unique_ptr<AllocatorBackend> backend)
      : device_name(std::move(device_name)), backend(std::move(backend)) {}

  ~Impl() { ReleaseAllSegments(); }

  // Every segment back to the backend, blocks still allocated included (the pool is closing).
  void ReleaseAllSegments() {
    Segment* seg = segments;
    while (seg != nullptr) {
      Segment* next = seg->next;
      backend->Free(seg->base, seg->size);
      delete seg;
      seg = next;
    }
    segments = nullptr;
  }

  // cached_only: serve the request from a cached block or return null (nothing counted, no
  // backend call, no error).
  Block* Allocate(size_t bytes, bool* cache_hit, const char* owner, bool inject_failure,
                  bool cached_only = false) {
    std::lock_guard<std::mutex> lock(mu);
    Block* cached = nullptr;  // the cached_only request's block, found before anything is counted
    if (cached_only) {
      if (closed || bytes == 0 || bytes > kMaxRequest) return nullptr;
      const size_t size = RoundRequest(bytes);
      cached = bins[size <= kSmallRequest ? kSmallPool : kLargePool].Find(size);
      if (cached == nullptr) return nullptr;
    }
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
    // Growing may need two metadata objects (segment block + split remainder); getting them first
    // means a failed refill leaves the pool untouched.
    if (spare == nullptr || spare->free_next == nullptr) RefillMetadata();

    const size_t size = RoundRequest(bytes);
    const PoolKind kind = size <= kSmallRequest ? kSmallPool : kLargePool;
    FreeBins& pool = bins[kind];
    Block* b = cached != nullptr ? cached : pool.Find(size);
    const bool hit = b != nullptr;
    if (hit) {
      pool.Remove(b);
      ++stats.cache_hits;
    } else {
      b = Grow(bytes, size, kind);
      ++stats.cache_misses;
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

    b->allocated = true;
    if (owner != nullptr) {
      const size_t n = strnlen(owner, kOwnerCapacity - 1);
      std::memcpy(b->owner, owner, n);
      b->owner[n] = '\0';
    } else {
      b->owner[0] = '\0';
    }
    stats.allocated_bytes += static_cast<int64_t>(b->size);
    stats.peak_allocated_bytes = std::max(stats.peak_allocated_bytes, stats.allocated_bytes);
    if (cache_hit != nullptr) *cache_hit = hit;
    if (__builtin_expect(static_cast<bool>(observer), 0)) {
      Notify(PoolEventKind::kAlloc, b->ptr, b->size, bytes, hit, b->owner);
    }
    return b;
  }

  void Free(Block* b) {
    std::lock_guard<std::mutex> lock(mu);
    if (closed) return;  // its segment went back with the rest at Close
    if (!b->allocated) {
      throw InvalidArgument("CachingAllocator::Free on " + device_name +
                            ": block is not allocated (double free?)");
    }
    b->allocated = false;
    if (b->pending_free) {
      // Counted free (and reported to the observer) when its tensor died.
      b->pending_free = false;
      stats.pending_free_bytes -= static_cast<int64_t>(b->size);
    } else {
      stats.allocated_bytes -= static_cast<int64_t>(b->size);
      if (__builtin_expect(static_cast<bool>(observer), 0)) {
        Notify(PoolEventKind::kFree, b->ptr, b->size, 0, false, b->owner);
      }
    }
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

  void MarkDead(Block* b) {
    std::lock_guard<std::mutex> lock(mu);
    if (closed) return;
    if (!b->allocated || b->pending_free) {
      throw InvalidArgument("CachingAllocator::MarkDead on " + device_name +
                            ": block is not in use (marked twice?)");
    }
    b->pending_free = true;
    stats.allocated_bytes -= static_cast<int64_t>(b->size);
    stats.pending_free_bytes += static_cast<int64_t>(b->size);
    if (__builtin_expect(static_cast<bool>(observer), 0)) {
      Notify(PoolEventKind::kFree, b->ptr, b->size, 0, false, b->owner);
    }
  }

  // A block covering a fresh segment big enough for `size`; throws OutOfMemory when neither the
  // backend nor the limit allows one, even after the cache is emptied.
  Block* Grow(size_t bytes, size_t size, PoolKind kind) {
    const size_t seg_size = kind == kSmallPool ? kSmallSegment : RoundUp(size, kLargeRound);
    auto seg = std::make_unique<Segment>();
    char* base = Reserve(seg_size);
    if (base == nullptr) {
      ReleaseCachedSegments();
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

  void ReleaseCachedSegments() {
    Segment* seg = segments;
    while (seg != nullptr) {
      Segment* next = seg->next;
      Block* first = seg->first;
      if (!first->allocated && first->next == nullptr) {
        bins[seg->pool].Remove(first);
        ReturnMetadata(first);
        backend->Free(seg->base, seg->size);
        stats.reserved_bytes -= static_cast<int64_t>(seg->size);
        if (__builtin_expect(static_cast<bool>(observer), 0)) {
          Notify(PoolEventKind::kSegmentFree, seg->base, seg->size, 0, false, "");
        }
        if (seg->prev != nullptr) seg->prev->next = seg->next;
        if (seg->next != nullptr) seg->next->prev = seg->prev;
        if (segments == seg) segments = seg->next;
        delete seg;
      }
      seg = next;
    }
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
  mutable std::mutex mu;
  // Everything below is guarded by mu.
  MemoryStats stats;
  int64_t limit = 0;
  FreeBins bins[2];
  Segment* segments = nullptr;  // every live segment, newest first
  Block* spare = nullptr;       // unused metadata objects
  bool closed = false;          // Close() ran: no more allocations, frees are no-ops
  std::vector<std::unique_ptr<Block[]>> chunks;
  PoolObserver observer;  // empty unless someone (the VM while tracing) watches this pool
};

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

void* CpuAllocatorBackend::Allocate(size_t bytes) {
  if (bytes == 0 || bytes > MaxHostAllocation()) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, kPageSize, RoundUp(bytes, kPageSize)) != 0) return nullptr;
  return p;
}

void CpuAllocatorBackend::Free(void* ptr, size_t /*bytes*/) { std::free(ptr); }

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

void* CachingAllocator::Data(const Block* block) { return block->ptr; }

size_t CachingAllocator::Size(const Block* block) { return block->size; }

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

void CachingAllocator::ResetPeakStats() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stats.peak_allocated_bytes = impl_->stats.allocated_bytes;
  impl_->stats.peak_reserved_bytes = impl_->stats.reserved_bytes;
}

void CachingAllocator::Close() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->closed) return;
  impl_->closed = true;
  impl_->ReleaseAllSegments();
  impl_->stats.allocated_bytes = 0;
  impl_->stats.reserved_bytes = 0;
  impl_->stats.pending_free_bytes = 0;
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->ReleaseCachedSegments();
}

void CachingAllocator::SetLimit(int64_t bytes) {
  if (bytes < 0) {
    throw InvalidArgument("set_memory_limit: limit for " + device_.str() +
                          " must be >= 0 bytes (0 means no limit), got " + std::to_string(bytes));
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->limit = bytes;
}

int64_t CachingAllocator::limit() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->limit;
}

void CachingAllocator::SetObserver(PoolObserver observer) {
  PoolObserver old;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    old = std::move(impl_->observer);
    impl_->observer = std::move(observer);
  }
  // `old` (and what it captured) dies outside the lock.
}

std::vector<SegmentInfo> CachingAllocator::Snapshot() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<SegmentInfo> result;
  for (Segment* seg = impl_->segments; seg != nullptr; seg = seg->next) {
    SegmentInfo info;
    info.address = reinterpret_cast<uintptr_t>(seg->base);
    info.size = seg->size;
    for (Block* b = seg->first; b != nullptr; b = b->next) {
      BlockInfo block;
      block.address = reinterpret_cast<uintptr_t>(b->ptr);
      block.size = b->size;
      block.allocated = b->allocated && !b->pending_free;
      block.pending_free = b->pending_free;
      if (b->allocated) block.owner = b->owner;
      info.blocks.push_back(std::move(block));
    }
    result.push_back(std::move(info));
  }
  std::sort(result.begin(), result.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return result;
}

}  // namespace ofl::vm
