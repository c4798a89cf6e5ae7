// The caching pool's block records and the two structures that hold its free blocks: TLSF-style
// size-class bins (a two-level bitmap over intrusive free lists) for blocks that merge with their
// free neighbours, and quick lists for tiny blocks that wait, unmerged, to be handed out again at
// their exact size. Internal to vm/allocator/caching_allocator.cpp; everything here is guarded by
// the pool's mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_set>

#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {

namespace pool_detail {

// Sizes are kept in units of kTinyBytes: requests below kRoundBytes are rounded to a multiple of
// kTinyBytes (a 48-byte tensor holds 64, not 512); larger ones to a multiple of kRoundBytes.
constexpr int kBinShift = 6;
constexpr size_t kTinyBytes = size_t{1} << kBinShift;
constexpr size_t kRoundBytes = 512;
static_assert(kTinyBytes % CachingAllocator::kAlignment == 0, "blocks must stay aligned");

// Second-level bins per power of two: bins are at most ~3% wide, so the rounded-up search wastes
// little, and one 32-bit word per first level holds the second-level bitmap.
constexpr int kSlLog2 = 5;
constexpr int kSlCount = 1 << kSlLog2;
constexpr int kFlCount = 64;
// How many blocks of the request's own bin are looked at before settling for a bigger bin. Bounded
// so that a bin full of slightly-too-small blocks cannot make a lookup linear.
constexpr int kBinScanLimit = 8;

enum PoolKind : uint8_t { kSmallPool = 0, kLargePool = 1 };

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

}  // namespace pool_detail

// A block's states: allocated (in use, maybe pending_free), free in the bins (merged with its free
// neighbours), or free in a quick list (quick: not merged, and never merged with while it is
// there).
struct CachingAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  // Address-order neighbours inside the same segment, for merging.
  Block* prev = nullptr;
  Block* next = nullptr;
  // Links in a bin's free list or a quick list; free_next also threads the metadata free list.
  Block* free_prev = nullptr;
  Block* free_next = nullptr;
  bool allocated = false;
  // Allocated but already counted free: its tensor died while device work using it was still
  // pending (MarkDead); it returns to the bins at Free, once that work completed.
  bool pending_free = false;
  bool quick = false;  // free, waiting in a quick list
  pool_detail::PoolKind pool = pool_detail::kSmallPool;
  // Who allocated it: one of the pool's interned names (OwnerNames), "" for nobody.
  const char* owner = "";
};

namespace pool_detail {

using Block = CachingAllocator::Block;

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

// Freed tiny blocks of the small pool (below kRoundBytes), one LIFO list per 64-byte size class.
// A tensor-sized block that dies is usually wanted again at once at the same size (the next op's
// output): the quick list hands it back without the bins' split on allocation and merge on free.
// Blocks wait here unmerged only as long as the pool has room elsewhere: the pool flushes them
// into the bins (merging them with their neighbours) before it would grow, before it returns
// memory to the backend and before a snapshot, so memory held here is never lost to other sizes.
struct QuickLists {
  static constexpr int kClasses = static_cast<int>(kRoundBytes / kTinyBytes);
  Block* heads[kClasses] = {};
  size_t count = 0;

  static bool Fits(size_t size, PoolKind pool) { return pool == kSmallPool && size < kRoundBytes; }

  void Push(Block* b) {
    Block*& head = heads[b->size >> kBinShift];
    b->quick = true;
    b->free_prev = nullptr;
    b->free_next = head;
    head = b;
    ++count;
  }

  // A block of exactly `size` bytes (Fits(size, kSmallPool)), or null.
  Block* Pop(size_t size) {
    Block*& head = heads[size >> kBinShift];
    Block* b = head;
    if (b == nullptr) return nullptr;
    head = b->free_next;
    b->free_next = nullptr;
    b->quick = false;
    --count;
    return b;
  }

  // Empties every list and returns their blocks chained through free_next, still marked quick
  // (so that merging one of them into the bins never takes in another still on the chain).
  Block* TakeAll() {
    Block* chain = nullptr;
    for (Block*& head : heads) {
      while (head != nullptr) {
        Block* b = head;
        head = b->free_next;
        b->free_next = chain;
        chain = b;
      }
    }
    count = 0;
    return chain;
  }
};

// The distinct owner names (op names) the pool has seen, each kept once for the pool's life, so
// that a block records its owner as a pointer. A program has few op names; the last one used is
// checked first, so a run of the same op costs one string compare.
class OwnerNames {
 public:
  // A program whose op names are made up on the fly (numbered, say) would grow the set without
  // end: past kMaxNames new names are recorded as kTooMany instead.
  static constexpr size_t kMaxNames = 4096;
  static constexpr const char* kTooMany = "(op names beyond the first 4096)";

  const char* Intern(const char* name) {
    if (name == nullptr || *name == '\0') return "";
    if (last_ != nullptr && std::strcmp(name, last_) == 0) return last_;
    auto it = names_.find(name);
    if (it == names_.end()) {
      if (names_.size() >= kMaxNames) return kTooMany;
      it = names_.emplace(name).first;
    }
    last_ = it->c_str();
    return last_;
  }

 private:
  std::unordered_set<std::string> names_;  // nodes never move: their c_str() stays valid
  const char* last_ = nullptr;
};

}  // namespace pool_detail

}  // namespace ofl::vm
