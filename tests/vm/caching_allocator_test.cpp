// Tests for the caching allocator: block reuse, split/merge, pools, stats, limits, OOM recovery and
// thread safety, checked through the public API and Snapshot().
#include "vm/allocator/caching_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "tests/vm/cpu_allocator_backend.h"

namespace ofl::vm {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

std::unique_ptr<CachingAllocator> MakeCpuAllocator() {
  return std::make_unique<CachingAllocator>(Device("cpu"), std::make_unique<CpuAllocatorBackend>());
}

// Counts live segments so tests can see what goes back to the backend.
class CountingBackend : public AllocatorBackend {
 public:
  explicit CountingBackend(std::shared_ptr<std::atomic<int64_t>> live_bytes)
      : live_bytes_(std::move(live_bytes)) {}
  void* Allocate(size_t bytes) override {
    void* p = cpu_.Allocate(bytes);
    if (p != nullptr) *live_bytes_ += static_cast<int64_t>(bytes);
    return p;
  }
  void Free(void* ptr, size_t bytes) override {
    *live_bytes_ -= static_cast<int64_t>(bytes);
    cpu_.Free(ptr, bytes);
  }

 private:
  CpuAllocatorBackend cpu_;
  std::shared_ptr<std::atomic<int64_t>> live_bytes_;
};

class FailingBackend : public AllocatorBackend {
 public:
  void* Allocate(size_t) override { return nullptr; }
  void Free(void*, size_t) override {}
};

uintptr_t Addr(const CachingAllocator::Block* b) {
  return reinterpret_cast<uintptr_t>(CachingAllocator::Data(b));
}

TEST(CachingAllocatorTest, FreedBlockIsReusedAsCacheHitAtSameAddress) {
  auto alloc = MakeCpuAllocator();
  bool hit = true;
  auto* a = alloc->Allocate(4 * kKiB, &hit);
  EXPECT_FALSE(hit);
  const uintptr_t address = Addr(a);
  alloc->Free(a);
  auto* b = alloc->Allocate(4 * kKiB, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(Addr(b), address);
  alloc->Free(b);

  // Same for a large block with its own segment.
  auto* c = alloc->Allocate(64 * kMiB, &hit);
  EXPECT_FALSE(hit);
  const uintptr_t large_address = Addr(c);
  alloc->Free(c);
  auto* d = alloc->Allocate(64 * kMiB, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(Addr(d), large_address);
  alloc->Free(d);
}

TEST(CachingAllocatorTest, SegmentSplitsIntoBlocksAndMergesBackWhenAllFreed) {
  auto alloc = MakeCpuAllocator();
  std::vector<CachingAllocator::Block*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(alloc->Allocate(256 * kKiB));

  auto snap = alloc->Snapshot();
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].size, 2 * kMiB);
  ASSERT_EQ(snap[0].blocks.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(snap[0].blocks[i].allocated);
    EXPECT_EQ(snap[0].blocks[i].size, 256 * kKiB);
    EXPECT_EQ(snap[0].blocks[i].address, snap[0].address + i * 256 * kKiB);
  }
  EXPECT_FALSE(snap[0].blocks[4].allocated);
  EXPECT_EQ(snap[0].blocks[4].size, 1 * kMiB);

  // Free out of order so merges happen with the previous, the next and both neighbours.
  for (int i : {1, 3, 0, 2}) alloc->Free(blocks[i]);
  snap = alloc->Snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].blocks.size(), 1u);
  EXPECT_FALSE(snap[0].blocks[0].allocated);
  EXPECT_EQ(snap[0].blocks[0].size, 2 * kMiB);
  EXPECT_EQ(snap[0].blocks[0].address, snap[0].address);
  EXPECT_TRUE(snap[0].blocks[0].owner.empty());
}

TEST(CachingAllocatorTest, ExactHoleIsReusedBeforeSplittingTheTail) {
  auto alloc = MakeCpuAllocator();
  auto* a = alloc->Allocate(64 * kKiB);
  auto* b = alloc->Allocate(64 * kKiB);
  auto* c = alloc->Allocate(64 * kKiB);
  const uintptr_t hole = Addr(b);
  alloc->Free(b);
  bool hit = false;
  auto* d = alloc->Allocate(64 * kKiB, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(Addr(d), hole);
  for (auto* blk : {a, c, d}) alloc->Free(blk);
}

TEST(CachingAllocatorTest, TinyRequestsTakeSixtyFourByteClassesPackedSideBySide) {
  auto alloc = MakeCpuAllocator();
  const std::pair<size_t, size_t> rounding[] = {{1, 64},    {48, 64},   {64, 64},   {65, 128},
                                                {100, 128}, {448, 448}, {449, 512}, {511, 512},
                                                {512, 512}, {513, 1024}};
  for (const auto& [request, size] : rounding) {
    auto* b = alloc->Allocate(request);
    EXPECT_EQ(CachingAllocator::Size(b), size) << request;
    alloc->Free(b);
  }
  // A (4,3) float tensor holds 64 bytes, and the next one sits right after it (its slab's next
  // slot).
  auto fresh = MakeCpuAllocator();
  auto* a = fresh->Allocate(48);
  auto* b = fresh->Allocate(48);
  EXPECT_EQ(Addr(b), Addr(a) + 64);
  EXPECT_EQ(fresh->stats().allocated_bytes, 128);
  fresh->Free(a);
  fresh->Free(b);
}

// Tiny blocks are slots of slabs, one kind of slab per 64-byte size class: a freed slot comes back
// at its own size (the lowest free slot of the class's slab), and another size never takes it.
TEST(CachingAllocatorTest, FreedTinyBlockComesBackAtItsOwnSizeFirst) {
  auto alloc = MakeCpuAllocator();
  auto* a = alloc->Allocate(48);
  auto* b = alloc->Allocate(48);
  auto* c = alloc->Allocate(200);
  const uintptr_t a_addr = Addr(a), b_addr = Addr(b), c_addr = Addr(c);
  alloc->Free(a);
  alloc->Free(b);
  alloc->Free(c);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
  bool hit = false;
  auto* d = alloc->Allocate(64, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(Addr(d), a_addr);  // the lowest free 64-byte slot
  // A 128-byte request does not take the 256-byte slot waiting for its own size.
  auto* e = alloc->Allocate(128, &hit);
  EXPECT_TRUE(hit);
  EXPECT_NE(Addr(e), c_addr);
  auto* f = alloc->Allocate(256, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(Addr(f), c_addr);
  auto* g = alloc->TryAllocateCached(10);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(Addr(g), b_addr);
  EXPECT_EQ(alloc->stats().allocated_bytes, 64 + 128 + 256 + 64);
  for (auto* blk : {d, e, f, g}) alloc->Free(blk);
  // Freed again, they are free memory to the stats and the snapshot, merged back into one block.
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
  const auto snap = alloc->Snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].blocks.size(), 1u);
  EXPECT_FALSE(snap[0].blocks[0].allocated);
  EXPECT_EQ(snap[0].blocks[0].size, 2 * kMiB);
  EXPECT_THROW(alloc->Free(d), InvalidArgument);  // a double free is still caught
}

// A slab holds 64 tiny blocks side by side; the 65th of a size opens another slab, and the freed
// slot of a full slab is the next one handed out.
TEST(CachingAllocatorTest, AFullSlabOpensAnotherAndItsFreedSlotComesBackFirst) {
  auto alloc = MakeCpuAllocator();
  std::vector<CachingAllocator::Block*> blocks;
  for (int i = 0; i < 65; ++i) blocks.push_back(alloc->Allocate(100));
  for (int i = 1; i < 64; ++i) EXPECT_EQ(Addr(blocks[i]), Addr(blocks[0]) + 128 * i) << i;
  const uintptr_t slab_end = Addr(blocks[0]) + 64 * 128;
  EXPECT_TRUE(Addr(blocks[64]) < Addr(blocks[0]) || Addr(blocks[64]) >= slab_end);
  EXPECT_EQ(alloc->stats().allocated_bytes, 65 * 128);
  const uintptr_t freed = Addr(blocks[17]);
  alloc->Free(blocks[17]);
  blocks[17] = alloc->Allocate(128);
  EXPECT_EQ(Addr(blocks[17]), freed);
  for (auto* b : blocks) std::memset(CachingAllocator::Data(b), 0x5a, 128);
  for (auto* b : blocks) alloc->Free(b);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
  alloc->EmptyCache();
  EXPECT_EQ(alloc->stats().reserved_bytes, 0);
}

// A snapshot lists a slab's slots one by one, with their states and owners, in address order and
// covering the segment; its totals agree with the stats.
TEST(CachingAllocatorTest, SnapshotShowsEverySlotOfASlabWithItsState) {
  auto alloc = MakeCpuAllocator();
  auto* live = alloc->Allocate(40, nullptr, "live_op");
  auto* freed = alloc->Allocate(40, nullptr, "freed_op");
  auto* dying = alloc->Allocate(40, nullptr, "dying_op");
  auto* big = alloc->Allocate(4 * kKiB, nullptr, "big_op");
  alloc->Free(freed);
  alloc->MarkDead(dying);
  EXPECT_EQ(alloc->stats().allocated_bytes, 64 + 4096);
  EXPECT_EQ(alloc->stats().pending_free_bytes, 64);

  const auto snap = alloc->Snapshot();
  ASSERT_EQ(snap.size(), 1u);
  const auto& blocks = snap[0].blocks;
  ASSERT_GE(blocks.size(), 64u);
  uintptr_t next = snap[0].address;
  int64_t allocated = 0, pending = 0;
  for (const BlockInfo& b : blocks) {
    EXPECT_EQ(b.address, next);
    next += b.size;
    if (b.allocated) allocated += static_cast<int64_t>(b.size);
    if (b.pending_free) pending += static_cast<int64_t>(b.size);
  }
  EXPECT_EQ(next, snap[0].address + snap[0].size);
  EXPECT_EQ(allocated, alloc->stats().allocated_bytes);
  EXPECT_EQ(pending, alloc->stats().pending_free_bytes);
  const auto at = [&](const CachingAllocator::Block* h) {
    return *std::find_if(blocks.begin(), blocks.end(),
                         [&](const BlockInfo& b) { return b.address == Addr(h); });
  };
  EXPECT_TRUE(at(live).allocated);
  EXPECT_EQ(at(live).owner, "live_op");
  EXPECT_EQ(at(live).size, 64u);
  EXPECT_FALSE(at(freed).allocated);
  EXPECT_FALSE(at(freed).pending_free);
  EXPECT_TRUE(at(freed).owner.empty());
  EXPECT_FALSE(at(dying).allocated);
  EXPECT_TRUE(at(dying).pending_free);
  EXPECT_EQ(at(dying).owner, "dying_op");
  EXPECT_EQ(at(big).owner, "big_op");

  alloc->Free(dying);
  EXPECT_EQ(alloc->stats().pending_free_bytes, 0);
  for (auto* b : {live, big}) alloc->Free(b);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
}

// The misuse a slot's bits can catch: freeing a free slot, marking a free or already marked slot
// dead, and freeing a slot of a slab that went back to the bins (its record is spare, every bit
// free), also once the record serves another size, as long as that slot is free there. (A stale
// handle whose slot was handed out again cannot be told from the new one, as with any allocator.)
TEST(CachingAllocatorTest, MisusedTinyBlocksAreRefusedAndThePoolStaysUsable) {
  auto alloc = MakeCpuAllocator();
  auto* a = alloc->Allocate(64);
  auto* b = alloc->Allocate(64);
  alloc->MarkDead(a);
  EXPECT_THROW(alloc->MarkDead(a), InvalidArgument);
  alloc->Free(a);
  EXPECT_THROW(alloc->Free(a), InvalidArgument);
  EXPECT_THROW(alloc->MarkDead(a), InvalidArgument);
  alloc->Free(b);
  alloc->EmptyCache();  // the empty slab goes back to the bins, the segment to the backend
  EXPECT_EQ(alloc->stats().reserved_bytes, 0);
  EXPECT_THROW(alloc->Free(a), InvalidArgument);
  auto* c = alloc->Allocate(300);  // a new slab on the spare record: c is its slot 0
  EXPECT_THROW(alloc->Free(b), InvalidArgument);
  EXPECT_EQ(alloc->stats().allocated_bytes, 320);
  alloc->Free(c);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
}

// Close (the runtime shutting down) returns the segments with no block in use and keeps the
// others for good, even past the pool's life: a tensor, a DLPack capsule or a view that outlives
// the runtime still reads its memory. Afterwards the pool refuses requests with a clear error,
// late frees do nothing, and emptying the cache or taking a snapshot finds nothing.
TEST(CachingAllocatorTest, AClosedPoolKeepsTheMemoryOfBlocksInUseAndReturnsTheRest) {
  auto live_bytes = std::make_shared<std::atomic<int64_t>>(0);
  auto alloc = std::make_unique<CachingAllocator>(Device("cpu"),
                                                  std::make_unique<CountingBackend>(live_bytes));
  auto* tiny = alloc->Allocate(48);         // a slot of a slab in a small segment
  auto* slab_freed = alloc->Allocate(100);  // another slab in the same segment, empty below
  auto* big = alloc->Allocate(4 * kMiB);    // a segment of its own
  auto* pending = alloc->Allocate(6 * kMiB);
  auto* cached = alloc->Allocate(8 * kMiB);
  alloc->Free(slab_freed);
  alloc->Free(cached);
  alloc->MarkDead(pending);  // its device work may still run: only Free would say it is over
  EXPECT_EQ(live_bytes->load(), static_cast<int64_t>((2 + 4 + 6 + 8) * kMiB));
  auto* tiny_data = static_cast<unsigned char*>(CachingAllocator::Data(tiny));
  auto* big_data = static_cast<unsigned char*>(CachingAllocator::Data(big));
  std::memset(tiny_data, 0x5a, 48);
  std::memset(big_data, 0xa5, 4 * kMiB);

  alloc->Close();
  EXPECT_EQ(live_bytes->load(), static_cast<int64_t>((2 + 4 + 6) * kMiB));  // the cached one went
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
  EXPECT_EQ(alloc->stats().reserved_bytes, 0);
  EXPECT_EQ(CachingAllocator::Size(tiny), 64u);  // a live tensor's handle still answers
  EXPECT_EQ(CachingAllocator::Data(tiny), tiny_data);
  alloc->Free(tiny);
  alloc->Free(big);
  alloc->Free(pending);
  alloc->EmptyCache();
  EXPECT_TRUE(alloc->Snapshot().empty());
  EXPECT_EQ(alloc->TryAllocateCached(48), nullptr);
  try {
    alloc->Allocate(48);
    FAIL() << "a closed pool allocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
  alloc.reset();  // the pool goes; the memory of its blocks in use stays
  EXPECT_EQ(live_bytes->load(), static_cast<int64_t>((2 + 4 + 6) * kMiB));
  for (size_t i = 0; i < 48; ++i) ASSERT_EQ(tiny_data[i], 0x5a) << i;
  for (size_t i = 0; i < 4 * kMiB; i += 4093) ASSERT_EQ(big_data[i], 0xa5) << i;
  EXPECT_EQ(big_data[4 * kMiB - 1], 0xa5);
}

// Memory kept by empty slabs is never lost to other sizes: before the pool would grow (here it
// cannot: the limit is one segment), it merges them back and serves the request from them.
TEST(CachingAllocatorTest, TinyBlocksWaitingForTheirSizeAreMergedBeforeThePoolGrows) {
  auto alloc = MakeCpuAllocator();
  alloc->SetLimit(static_cast<int64_t>(2 * kMiB));
  std::vector<CachingAllocator::Block*> tiny;
  for (size_t i = 0; i < 2 * kMiB / 64; ++i) tiny.push_back(alloc->Allocate(64));
  EXPECT_EQ(alloc->stats().reserved_bytes, static_cast<int64_t>(2 * kMiB));
  EXPECT_THROW(alloc->Allocate(64), OutOfMemory);  // full
  for (auto* blk : tiny) alloc->Free(blk);
  bool hit = false;
  auto* big = alloc->Allocate(kMiB, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(alloc->stats().reserved_bytes, static_cast<int64_t>(2 * kMiB));
  auto* small = alloc->Allocate(448, &hit);
  EXPECT_TRUE(hit);
  alloc->Free(big);
  alloc->Free(small);
  // And EmptyCache gets the whole segment back, whatever empty slabs were waiting.
  alloc->EmptyCache();
  EXPECT_EQ(alloc->stats().reserved_bytes, 0);
}

TEST(CachingAllocatorTest, EveryBlockIsAlignedAndRoundedForOddSizes) {
  auto alloc = MakeCpuAllocator();
  std::vector<CachingAllocator::Block*> blocks;
  const size_t sizes[] = {
      1,    3,     63,    64,     65,       511,  512,      513,          1000,          4095,
      4097, 12345, 65537, 999999, kMiB - 1, kMiB, kMiB + 1, 3 * kMiB + 7, 5 * kMiB + 511};
  for (size_t size : sizes) {
    auto* b = alloc->Allocate(size);
    EXPECT_EQ(Addr(b) % CachingAllocator::kAlignment, 0u) << size;
    // Size classes of 64 bytes below 512, multiples of 512 from there.
    EXPECT_EQ(CachingAllocator::Size(b) % (size < 512 ? 64 : 512), 0u) << size;
    EXPECT_GE(CachingAllocator::Size(b), size);
    std::memset(CachingAllocator::Data(b), 0xab, size);  // the whole request is usable
    blocks.push_back(b);
  }
  for (auto* b : blocks) alloc->Free(b);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
}

TEST(CachingAllocatorTest, StatsAfterKnownSequenceAreExact) {
  auto alloc = MakeCpuAllocator();
  auto* a = alloc->Allocate(1000);      // 1024 bytes from a new 2 MiB small segment (miss)
  auto* b = alloc->Allocate(3 * kMiB);  // a new 4 MiB large segment, split 3 MiB + 1 MiB (miss)
  EXPECT_EQ(CachingAllocator::Size(a), 1024u);
  EXPECT_EQ(CachingAllocator::Size(b), 3 * kMiB);
  alloc->Free(a);
  auto* c = alloc->Allocate(700);  // the freed 1024-byte slot (hit)
  auto* d =
      alloc->Allocate(kMiB + 1);  // the 1 MiB large remainder is too small: new segment (miss)
  EXPECT_EQ(CachingAllocator::Size(d), 2 * kMiB);  // 2 MiB segment, leftover < 1 MiB not split

  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.alloc_requests, 4);
  EXPECT_EQ(s.cache_hits, 1);
  EXPECT_EQ(s.cache_misses, 3);
  EXPECT_EQ(s.ooms, 0);
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(1024 + 3 * kMiB + 2 * kMiB));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(2 * kMiB + 4 * kMiB + 2 * kMiB));
  EXPECT_EQ(s.peak_allocated_bytes, s.allocated_bytes);
  EXPECT_EQ(s.peak_reserved_bytes, s.reserved_bytes);

  for (auto* blk : {b, c, d}) alloc->Free(blk);
  s = alloc->stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(8 * kMiB));
}

TEST(CachingAllocatorTest, PeaksTrackHighWaterMarks) {
  auto alloc = MakeCpuAllocator();
  auto* a = alloc->Allocate(8 * kMiB);
  auto* b = alloc->Allocate(4 * kMiB);
  alloc->Free(a);
  alloc->Free(b);
  alloc->EmptyCache();
  auto* c = alloc->Allocate(2 * kMiB);
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(2 * kMiB));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(2 * kMiB));
  EXPECT_EQ(s.peak_allocated_bytes, static_cast<int64_t>(12 * kMiB));
  EXPECT_EQ(s.peak_reserved_bytes, static_cast<int64_t>(12 * kMiB));
  alloc->Free(c);
}

TEST(CachingAllocatorTest, SmallRequestsDoNotCarveLargeSegments) {
  auto alloc = MakeCpuAllocator();
  auto* big = alloc->Allocate(8 * kMiB);
  alloc->Free(big);
  bool hit = true;
  auto* small = alloc->Allocate(4 * kKiB, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(alloc->Snapshot().size(), 2u);
  EXPECT_EQ(alloc->stats().reserved_bytes, static_cast<int64_t>(10 * kMiB));
  alloc->Free(small);
}

TEST(CachingAllocatorTest, EmptyCacheReleasesReservedBytesWhenNothingIsAllocated) {
  auto live = std::make_shared<std::atomic<int64_t>>(0);
  CachingAllocator alloc(Device("cpu"), std::make_unique<CountingBackend>(live));
  std::vector<CachingAllocator::Block*> blocks;
  for (size_t size : {4 * kKiB, 300 * kKiB, 3 * kMiB, 17 * kMiB})
    blocks.push_back(alloc.Allocate(size));
  for (auto* b : blocks) alloc.Free(b);
  EXPECT_GT(alloc.stats().reserved_bytes, 0);
  alloc.EmptyCache();
  EXPECT_EQ(alloc.stats().reserved_bytes, 0);
  EXPECT_EQ(*live, 0);
  EXPECT_TRUE(alloc.Snapshot().empty());
  // The pool still works after being emptied.
  bool hit = true;
  auto* b = alloc.Allocate(4 * kKiB, &hit);
  EXPECT_FALSE(hit);
  alloc.Free(b);
}

TEST(CachingAllocatorTest, EmptyCacheKeepsSegmentsWithAllocatedBlocks) {
  auto alloc = MakeCpuAllocator();
  auto* kept = alloc->Allocate(4 * kKiB);
  auto* dropped = alloc->Allocate(4 * kMiB);
  alloc->Free(dropped);
  alloc->EmptyCache();
  EXPECT_EQ(alloc->stats().reserved_bytes, static_cast<int64_t>(2 * kMiB));
  alloc->Free(kept);
}

TEST(CachingAllocatorTest, DestructorReturnsEverySegmentToBackend) {
  auto live = std::make_shared<std::atomic<int64_t>>(0);
  {
    CachingAllocator alloc(Device("cpu"), std::make_unique<CountingBackend>(live));
    auto* a = alloc.Allocate(100);
    auto* b = alloc.Allocate(10 * kMiB);
    alloc.Free(b);
    (void)a;  // still allocated when the pool dies
    EXPECT_EQ(*live, static_cast<int64_t>(12 * kMiB));
  }
  EXPECT_EQ(*live, 0);
}

TEST(CachingAllocatorTest, LimitCausesOutOfMemoryNamingDeviceAndSizes) {
  auto alloc = MakeCpuAllocator();
  alloc->SetLimit(4 * kMiB);
  EXPECT_EQ(alloc->limit(), static_cast<int64_t>(4 * kMiB));
  auto* a = alloc->Allocate(kMiB);  // 2 MiB small segment, 1 MiB free after it
  try {
    alloc->Allocate(128 * kMiB);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cpu:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("134217728 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("128.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("allocated 1048576 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("reserved 2097152 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("largest free block 1048576 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("limit 4194304 bytes"), std::string::npos) << msg;
  }
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.ooms, 1);
  EXPECT_EQ(s.alloc_requests, 2);
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(kMiB));
  alloc->Free(a);
}

TEST(CachingAllocatorTest, PoolKeepsWorkingAfterOutOfMemory) {
  auto alloc = MakeCpuAllocator();
  alloc->SetLimit(8 * kMiB);
  auto* a = alloc->Allocate(6 * kMiB);
  EXPECT_THROW(alloc->Allocate(4 * kMiB), OutOfMemory);
  alloc->Free(a);
  // The freed 6 MiB segment is dropped on the retry, making room for 8 MiB.
  auto* b = alloc->Allocate(8 * kMiB);
  alloc->Free(b);
  bool hit = false;
  auto* d = alloc->Allocate(4 * kMiB, &hit);  // split from the cached 8 MiB block
  EXPECT_TRUE(hit);
  auto* e = alloc->Allocate(3 * kMiB, &hit);  // and from its 4 MiB remainder
  EXPECT_TRUE(hit);
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.ooms, 1);
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(7 * kMiB));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(8 * kMiB));
  alloc->Free(d);
  alloc->Free(e);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
}

TEST(CachingAllocatorTest, OutOfMemoryRetryFreesCachedSegments) {
  auto alloc = MakeCpuAllocator();
  alloc->SetLimit(4 * kMiB);
  auto* a = alloc->Allocate(3 * kMiB);  // 4 MiB large segment
  alloc->Free(a);                       // cached, still reserved
  EXPECT_EQ(alloc->stats().reserved_bytes, static_cast<int64_t>(4 * kMiB));
  bool hit = true;
  auto* b = alloc->Allocate(kMiB, &hit);  // needs a 2 MiB small segment: only fits once A is gone
  EXPECT_FALSE(hit);
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.cache_misses, 2);
  EXPECT_EQ(s.ooms, 0);
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(2 * kMiB));
  alloc->Free(b);
}

TEST(CachingAllocatorTest, FailingBackendThrowsOutOfMemory) {
  CachingAllocator alloc(Device("cpu"), std::make_unique<FailingBackend>());
  EXPECT_THROW(alloc.Allocate(4 * kKiB), OutOfMemory);
  EXPECT_THROW(alloc.Allocate(64 * kMiB), OutOfMemory);
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.ooms, 2);
  EXPECT_EQ(s.alloc_requests, 2);
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.cache_misses, 0);
}

TEST(CachingAllocatorTest, AbsurdSizeThrowsOutOfMemoryInsteadOfCrashing) {
  auto alloc = MakeCpuAllocator();
  EXPECT_THROW(alloc->Allocate(size_t{1} << 62), OutOfMemory);
  EXPECT_THROW(alloc->Allocate(~size_t{0}), OutOfMemory);
  auto* b = alloc->Allocate(4 * kKiB);
  alloc->Free(b);
  EXPECT_EQ(alloc->stats().ooms, 2);
}

// A block records its size in 47 bits: a request that could not be recorded (128 TiB or more once
// rounded) is refused before the backend is asked; one just below it does reach the backend.
TEST(CachingAllocatorTest, RequestsTooLargeForABlockRecordAreRefusedBeforeTheBackend) {
  struct Recording : AllocatorBackend {
    explicit Recording(size_t* largest) : largest(largest) {}
    void* Allocate(size_t bytes) override {
      *largest = std::max(*largest, bytes);
      return nullptr;
    }
    void Free(void*, size_t) override {}
    size_t* largest;
  };
  size_t largest = 0;
  CachingAllocator alloc(Device("cpu"), std::make_unique<Recording>(&largest));
  const size_t too_large = size_t{1} << 47;
  try {
    alloc.Allocate(too_large);
    ADD_FAILURE() << "a 128 TiB request was served";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(too_large)), std::string::npos) << e.what();
  }
  EXPECT_EQ(largest, 0u);
  const size_t just_below = too_large - 4 * kMiB;
  EXPECT_THROW(alloc.Allocate(just_below), OutOfMemory);
  EXPECT_GE(largest, just_below);
  EXPECT_EQ(alloc.stats().ooms, 2);
}

TEST(CachingAllocatorTest, CpuBackendReturnsPageAlignedMemoryOrNull) {
  CpuAllocatorBackend backend;
  void* p = backend.Allocate(12345);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  backend.Free(p, 12345);
  EXPECT_EQ(backend.Allocate(size_t{1} << 62), nullptr);
}

TEST(CachingAllocatorTest, NegativeLimitIsInvalidArgument) {
  auto alloc = MakeCpuAllocator();
  try {
    alloc->SetLimit(-5);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("set_memory_limit"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cpu:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("-5"), std::string::npos) << msg;
  }
  EXPECT_EQ(alloc->limit(), 0);
  alloc->SetLimit(0);  // no limit
  auto* b = alloc->Allocate(32 * kMiB);
  alloc->Free(b);
}

TEST(CachingAllocatorTest, ZeroByteAllocateIsInvalidArgument) {
  auto alloc = MakeCpuAllocator();
  EXPECT_THROW(alloc->Allocate(0), InvalidArgument);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
  EXPECT_EQ(alloc->stats().reserved_bytes, 0);
}

TEST(CachingAllocatorTest, FreeNullIsNoOp) {
  auto alloc = MakeCpuAllocator();
  alloc->Free(nullptr);
  EXPECT_EQ(alloc->stats().allocated_bytes, 0);
}

// A block records its owner's name as given (however long, and whatever happens to the caller's
// string afterwards); a program that makes up names without end gets a fixed label past the 4096th.
TEST(CachingAllocatorTest, OwnerNamesAreKeptWholeAndTheirNumberIsBounded) {
  auto alloc = MakeCpuAllocator();
  const std::string long_name(100, 'x');
  std::string name = "conv";
  auto* a = alloc->Allocate(64, nullptr, long_name.c_str());
  auto* b = alloc->Allocate(64, nullptr, name.c_str());
  name = "gone";  // the caller's string changes: the block keeps "conv"
  auto* c = alloc->Allocate(64, nullptr, name.c_str());
  auto* d = alloc->Allocate(64, nullptr, nullptr);
  std::vector<std::string> owners;
  for (const SegmentInfo& seg : alloc->Snapshot())
    for (const BlockInfo& blk : seg.blocks)
      if (blk.allocated) owners.push_back(blk.owner);
  EXPECT_EQ(owners, (std::vector<std::string>{long_name, "conv", "gone", ""}));
  for (auto* blk : {a, b, c, d}) alloc->Free(blk);

  for (int i = 0; i < 4096; ++i)
    alloc->Free(alloc->Allocate(64, nullptr, ("op" + std::to_string(i)).c_str()));
  auto* late = alloc->Allocate(64, nullptr, "one_more_name");
  auto* known = alloc->Allocate(64, nullptr, "conv");
  owners.clear();
  for (const SegmentInfo& seg : alloc->Snapshot())
    for (const BlockInfo& blk : seg.blocks)
      if (blk.allocated) owners.push_back(blk.owner);
  std::sort(owners.begin(), owners.end());  // address order depends on which blocks were reused
  EXPECT_EQ(owners, (std::vector<std::string>{"(op names beyond the first 4096)", "conv"}));
  alloc->Free(late);
  alloc->Free(known);
}

TEST(CachingAllocatorTest, SnapshotTotalsMatchStatsAndRecordOwners) {
  auto alloc = MakeCpuAllocator();
  std::vector<CachingAllocator::Block*> blocks;
  const size_t sizes[] = {100, 5000, 70000, 900 * kKiB, 3 * kMiB, 1536 * kKiB, 9 * kMiB + 3};
  for (size_t size : sizes) blocks.push_back(alloc->Allocate(size, nullptr, "matmul"));
  alloc->Free(blocks[1]);
  alloc->Free(blocks[4]);

  const auto snap = alloc->Snapshot();
  const MemoryStats s = alloc->stats();
  int64_t allocated = 0;
  int64_t reserved = 0;
  uintptr_t previous_segment = 0;
  for (const SegmentInfo& seg : snap) {
    EXPECT_GT(seg.address, previous_segment);
    previous_segment = seg.address;
    reserved += static_cast<int64_t>(seg.size);
    uintptr_t cursor = seg.address;
    for (const BlockInfo& b : seg.blocks) {
      EXPECT_EQ(b.address, cursor);  // blocks tile the segment in address order
      cursor += b.size;
      if (b.allocated) {
        allocated += static_cast<int64_t>(b.size);
        EXPECT_EQ(b.owner, "matmul");
      } else {
        EXPECT_TRUE(b.owner.empty());
      }
    }
    EXPECT_EQ(cursor, seg.address + seg.size);
  }
  EXPECT_EQ(allocated, s.allocated_bytes);
  EXPECT_EQ(reserved, s.reserved_bytes);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i != 1 && i != 4) alloc->Free(blocks[i]);
  }
}

TEST(CachingAllocatorTest, ConcurrentAllocFreeNeverOverlapsAndBalancesStats) {
  auto alloc = MakeCpuAllocator();
  constexpr int kThreads = 4;
  constexpr int kIterations = 1500;
  std::atomic<int> corruptions{0};
  auto worker = [&](int tid) {
    std::mt19937_64 rng(1234 + tid);
    struct Live {
      CachingAllocator::Block* block;
      size_t size;
      uint64_t tag;  // unique over the whole test, so an overlap always shows up
    };
    std::vector<Live> live;
    auto fill = [](void* data, size_t size, uint64_t tag) {
      auto* bytes = static_cast<unsigned char*>(data);
      for (size_t i = 0; i + 8 <= size; i += 8) std::memcpy(bytes + i, &tag, 8);
      for (size_t i = size & ~size_t{7}; i < size; ++i) bytes[i] = static_cast<unsigned char>(tag);
    };
    auto intact = [](const void* data, size_t size, uint64_t tag) {
      const auto* bytes = static_cast<const unsigned char*>(data);
      for (size_t i = 0; i + 8 <= size; i += 8) {
        if (std::memcmp(bytes + i, &tag, 8) != 0) return false;
      }
      for (size_t i = size & ~size_t{7}; i < size; ++i) {
        if (bytes[i] != static_cast<unsigned char>(tag)) return false;
      }
      return true;
    };
    auto check_and_free = [&](size_t index) {
      const Live item = live[index];
      if (!intact(CachingAllocator::Data(item.block), item.size, item.tag)) ++corruptions;
      alloc->Free(item.block);
      live[index] = live.back();
      live.pop_back();
    };
    for (int it = 0; it < kIterations; ++it) {
      if (live.size() < 16 && (live.empty() || rng() % 3 != 0)) {
        // Large, tiny (slab slots, shared by the threads' slabs) and everything in between.
        const uint64_t kind = rng() % 20;
        const size_t size = kind == 0  ? 1 + rng() % (3 * kMiB)
                            : kind < 8 ? 1 + rng() % 511
                                       : 1 + rng() % (64 * kKiB);
        auto* b = alloc->Allocate(size, nullptr, "stress");
        const uint64_t tag = (static_cast<uint64_t>(tid) << 32) | static_cast<uint64_t>(it);
        fill(CachingAllocator::Data(b), size, tag);
        live.push_back({b, size, tag});
      } else {
        check_and_free(rng() % live.size());
      }
    }
    while (!live.empty()) check_and_free(live.size() - 1);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();

  EXPECT_EQ(corruptions, 0);
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.cache_hits + s.cache_misses, s.alloc_requests);
  for (const SegmentInfo& seg : alloc->Snapshot()) {
    ASSERT_EQ(seg.blocks.size(), 1u);  // fully merged back
    EXPECT_FALSE(seg.blocks[0].allocated);
  }
  alloc->EmptyCache();
  EXPECT_EQ(alloc->stats().reserved_bytes, 0);
}

}  // namespace
}  // namespace ofl::vm
