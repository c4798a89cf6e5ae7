// Tiny blocks (requests below pool_detail::kRoundBytes) without a block record each: a slab is one
// ordinary pool block cut into 64 slots of one 64-byte size class, and a slot is described by a
// bit in its slab's masks and a 2-byte owner id. A live (4,3) float tensor then costs the pool 4
// bytes of host memory (a 256-byte slab record over 64 slots) instead of a 48-byte block record.
// The handle callers get for a slot is a tagged pointer: the slab record's address (aligned to 256
// bytes) with the slot index and a low 1 bit in its low byte. Internal to the caching pool
// (vm/allocator/pool_impl.h); everything here is guarded by the pool's mutex, except what
// Data() and Size() read of a live slot's slab (its backing block and slot size), which does not
// change while a slot of it is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "vm/allocator/pool_blocks.h"

namespace ofl::vm::pool_detail {

constexpr int kSlabSlots = 64;
constexpr uint64_t kAllSlots = ~uint64_t{0};
constexpr size_t kSlabAlign = 256;

struct alignas(kSlabAlign) Slab {
  // The pool block the slots are carved from, allocated for as long as the slab is open (no other
  // owner: a snapshot finds a slab's block by this pointer). Null for a spare record.
  Block* backing = nullptr;
  uint64_t free = kAllSlots;  // bit i: slot i is free
  // Bit i: slot i is allocated but already counted free (CachingAllocator::MarkDead).
  uint64_t pending = 0;
  // Links in its class's list of slabs with a free slot; `next` also threads the spare records.
  Slab* prev = nullptr;
  Slab* next = nullptr;
  uint32_t slot_bytes = 0;
  uint16_t owner[kSlabSlots] = {};  // OwnerNames ids of the allocated slots

  char* Slot(int i) const { return backing->ptr + static_cast<size_t>(i) * slot_bytes; }
};
static_assert(sizeof(Slab) == kSlabAlign, "one slab record per 64 tiny blocks: 4 bytes each");
static_assert(OwnerNames::kMaxNames + 2 <= (size_t{1} << 16), "owner ids fit Slab::owner");

// A slot's handle (a CachingAllocator::Block* to callers): never a valid Block address, since
// block records are 8-byte aligned and a handle's lowest bit is set.
inline bool IsSlot(const Block* h) { return (reinterpret_cast<uintptr_t>(h) & 1) != 0; }
inline Block* SlotHandle(Slab* s, int i) {
  return reinterpret_cast<Block*>(reinterpret_cast<uintptr_t>(s) |
                                  (static_cast<uintptr_t>(i) << 1) | 1);
}
inline Slab* SlabOf(const Block* h) {
  return reinterpret_cast<Slab*>(reinterpret_cast<uintptr_t>(h) & ~uintptr_t{kSlabAlign - 1});
}
inline int SlotOf(const Block* h) {
  return static_cast<int>((reinterpret_cast<uintptr_t>(h) & (kSlabAlign - 1)) >> 1);
}
static_assert(((kSlabSlots - 1) << 1 | 1) < static_cast<int>(kSlabAlign), "slot index fits");

// The pool's slabs: per size class, the open ones that have a free slot (a new slab, or a full one
// that a free gave a slot back, goes first); full slabs are in no list. Slabs whose every slot is
// free stay open (the next tiny request takes them at once) until the pool flushes them back into
// its bins: before it would grow, before it returns memory to the backend, before a snapshot and on
// out-of-memory, so memory held by empty slabs is never lost to other sizes.
struct TinySlabs {
  static constexpr int kClasses = static_cast<int>(kRoundBytes / kTinyBytes);
  static bool Fits(size_t size) { return size < kRoundBytes; }
  static int Class(size_t size) { return static_cast<int>(size >> kBinShift); }

  // Records come in chunks of this many, one aligned allocation each (one per record would cost
  // an over-aligned heap call and its padding each).
  static constexpr size_t kRecordsPerChunk = 64;

  Slab* open[kClasses] = {};
  size_t empty = 0;                             // open slabs with every slot free
  Slab* spare = nullptr;                        // records not in use
  std::vector<std::unique_ptr<Slab[]>> chunks;  // every record, freed with the pool

  // Calls f(const Slab&) for every record in use.
  template <typename F>
  void ForEachOpen(F&& f) const {
    for (const auto& chunk : chunks) {
      for (size_t i = 0; i < kRecordsPerChunk; ++i) {
        if (chunk[i].backing != nullptr) f(chunk[i]);
      }
    }
  }

  // Makes sure a spare record is there for the next Open (which then cannot fail).
  void ReserveRecord() {
    if (spare != nullptr) return;
    chunks.push_back(std::make_unique<Slab[]>(kRecordsPerChunk));
    Slab* chunk = chunks.back().get();
    for (size_t i = 0; i < kRecordsPerChunk; ++i) {
      chunk[i].next = i + 1 < kRecordsPerChunk ? &chunk[i + 1] : nullptr;
    }
    spare = chunk;
  }

  // A record for a new slab over `backing`, every slot free, at the front of its class's list.
  // ReserveRecord must have run since the last Open.
  Slab* Open(Block* backing, size_t slot_bytes) {
    Slab* s = spare;
    spare = s->next;
    s->backing = backing;
    s->free = kAllSlots;
    s->pending = 0;
    s->slot_bytes = static_cast<uint32_t>(slot_bytes);
    s->prev = s->next = nullptr;
    Link(s);
    ++empty;
    return s;
  }

  // Takes the lowest free slot of the class's first open slab (which must exist).
  int Take(Slab* s) {
    if (s->free == kAllSlots) --empty;
    const int i = __builtin_ctzll(s->free);
    s->free &= ~(uint64_t{1} << i);
    if (s->free == 0) Unlink(s);
    return i;
  }

  // Frees slot i (allocated). Returns nothing: the slab stays open, even when empty.
  void Put(Slab* s, int i) {
    if (s->free == 0) Link(s);
    s->free |= uint64_t{1} << i;
    if (s->free == kAllSlots) ++empty;
  }

  // Closes an empty slab: out of its list, its record spare again (every slot free, so a stale
  // handle to it is still caught as a double free). Returns its backing block.
  Block* Close(Slab* s) {
    Unlink(s);
    --empty;
    Block* backing = s->backing;
    s->backing = nullptr;
    s->next = spare;
    spare = s;
    return backing;
  }

  // The pool closed: no slab is open any more (the records keep what Data() and Size() read).
  void Forget() {
    for (Slab*& head : open) head = nullptr;
    empty = 0;
  }

  void Link(Slab* s) {
    Slab*& head = open[Class(s->slot_bytes)];
    s->prev = nullptr;
    s->next = head;
    if (head != nullptr) head->prev = s;
    head = s;
  }

  void Unlink(Slab* s) {
    if (s->prev != nullptr) {
      s->prev->next = s->next;
    } else {
      open[Class(s->slot_bytes)] = s->next;
    }
    if (s->next != nullptr) s->next->prev = s->prev;
    s->prev = s->next = nullptr;
  }
};

// A slab's slots as snapshot entries, in address order.
inline void AppendSlots(const Slab& s, const OwnerNames& names, std::vector<BlockInfo>* out) {
  for (int i = 0; i < kSlabSlots; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    BlockInfo slot;
    slot.address = reinterpret_cast<uintptr_t>(s.Slot(i));
    slot.size = s.slot_bytes;
    slot.pending_free = (s.pending & bit) != 0;
    slot.allocated = (s.free & bit) == 0 && !slot.pending_free;
    if ((s.free & bit) == 0) slot.owner = names.Name(s.owner[i]);
    out->push_back(std::move(slot));
  }
}

}  // namespace ofl::vm::pool_detail
