// The caching pool's block records and the structure that holds its free blocks: TLSF-style
// size-class bins (a two-level bitmap over intrusive free lists) for blocks that merge with their
// free neighbours. Tiny requests are served from slabs instead (vm/allocator/tiny_slabs.h).
// Internal to the caching pool (vm/allocator/pool_impl.h); everything here is guarded by the pool's
// mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {

namespace pool_detail {

// Sizes are kept in units of kTinyBytes: requests below kRoundBytes are rounded to a multiple of
// kTinyBytes (a 48-byte tensor holds 64, not 512) and served as slab slots; larger ones to a
// multiple of kRoundBytes.
constexpr int kBinShift = 6;
constexpr size_t kTinyBytes = size_t{1} << kBinShift;
constexpr size_t kRoundBytes = 512;
// A block's size field has 47 bits (128 TiB).
constexpr size_t kMaxBlockBytes = (size_t{1} << 47) - 1;
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

// A block's states: allocated (in use, maybe pending_free; or the backing of a tiny-block slab) or
// free in the bins (merged with its free neighbours). Every live tensor of 512 bytes or more holds
// one, so the record is packed into 48 bytes: its size, flags and owner share one word.
struct CachingAllocator::Block {
  Block() : size(0), allocated(0), pending_free(0), pool(0), owner(0) {}

  char* ptr = nullptr;
  // Address-order neighbours inside the same segment, for merging.
  Block* prev = nullptr;
  Block* next = nullptr;
  // Links in a bin's free list; free_next also threads the metadata free list.
  Block* free_prev = nullptr;
  Block* free_next = nullptr;
  uint64_t size : 47;  // bytes (below pool_detail::kMaxBlockBytes)
  uint64_t allocated : 1;
  // Allocated but already counted free: its tensor died while device work using it was still
  // pending (MarkDead); it returns to the bins at Free, once that work completed.
  uint64_t pending_free : 1;
  uint64_t pool : 1;  // a pool_detail::PoolKind
  // Who allocated it: an id of the pool's OwnerNames (0: nobody).
  uint64_t owner : 13;
};
static_assert(sizeof(void*) != 8 || sizeof(CachingAllocator::Block) == 48,
              "one block record per live tensor of 512 bytes or more: keep it at 48 bytes");

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

// The distinct owner names (op names) the pool has seen, each kept once for the pool's life, so
// that a block records its owner as a small id. A program has few op names; the last one used is
// checked first, so a run of the same op costs one string compare.
class OwnerNames {
 public:
  // A program whose op names are made up on the fly (numbered, say) would grow the set without
  // end: past kMaxNames new names are recorded as kTooMany instead.
  static constexpr size_t kMaxNames = 4096;
  static constexpr const char* kTooMany = "(op names beyond the first 4096)";
  static constexpr uint32_t kNobody = 0, kTooManyId = 1;

  OwnerNames() : by_id_{"", kTooMany} {}

  // The id of `name`; kNobody for null or "".
  uint32_t Intern(const char* name) {
    if (name == nullptr || *name == '\0') return kNobody;
    if (last_ != kNobody && std::strcmp(name, by_id_[last_]) == 0) return last_;
    auto it = ids_.find(name);
    if (it == ids_.end()) {
      if (ids_.size() >= kMaxNames) return kTooManyId;
      it = ids_.emplace(name, static_cast<uint32_t>(by_id_.size())).first;
      by_id_.push_back(it->first.c_str());
    }
    last_ = it->second;
    return last_;
  }
  // The name of an id Intern returned; valid for the pool's life.
  const char* Name(uint32_t id) const { return by_id_[id]; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;  // nodes never move: their c_str() stays valid
  std::vector<const char*> by_id_;
  uint32_t last_ = kNobody;
};
static_assert(OwnerNames::kMaxNames + 2 <= (size_t{1} << 13), "owner ids fit Block::owner");

}  // namespace pool_detail

}  // namespace ofl::vm
