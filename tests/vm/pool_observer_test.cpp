// Tests the caching pool's observer hook: every allocation (with hit or miss and owner), free,
// segment growth and segment release is reported once, in order, with the pool's allocated and
// reserved bytes right after it; removing the observer stops the reports.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/vm/cpu_allocator_backend.h"
#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {
namespace {

struct Seen {
  PoolEventKind kind;
  uintptr_t address;
  size_t bytes;
  size_t requested;
  bool hit;
  std::string owner;
  int64_t allocated;
  int64_t reserved;
};

class PoolObserverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ =
        std::make_unique<CachingAllocator>(Device("cpu"), std::make_unique<CpuAllocatorBackend>());
    pool_->SetObserver([this](const PoolEvent& e) {
      // Under the pool's lock: the totals must be the ones right after this event.
      seen_.push_back({e.kind, e.address, e.bytes, e.requested, e.cache_hit, e.owner,
                       e.allocated_bytes, e.reserved_bytes});
    });
  }

  std::unique_ptr<CachingAllocator> pool_;
  std::vector<Seen> seen_;
};

uintptr_t Addr(const CachingAllocator::Block* b) {
  return reinterpret_cast<uintptr_t>(CachingAllocator::Data(b));
}

TEST_F(PoolObserverTest, MissGrowsASegmentThenAllocates) {
  CachingAllocator::Block* b = pool_->Allocate(1000, nullptr, "my_op");
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_EQ(seen_[0].kind, PoolEventKind::kSegmentAlloc);
  EXPECT_EQ(seen_[0].allocated, 0);
  EXPECT_EQ(seen_[0].reserved, static_cast<int64_t>(seen_[0].bytes));
  EXPECT_EQ(seen_[0].owner, "");
  EXPECT_EQ(seen_[1].kind, PoolEventKind::kAlloc);
  EXPECT_EQ(seen_[1].address, Addr(b));
  EXPECT_EQ(seen_[1].bytes, CachingAllocator::Size(b));
  EXPECT_EQ(seen_[1].requested, 1000u);
  EXPECT_FALSE(seen_[1].hit);
  EXPECT_EQ(seen_[1].owner, "my_op");
  const MemoryStats s = pool_->stats();
  EXPECT_EQ(seen_[1].allocated, s.allocated_bytes);
  EXPECT_EQ(seen_[1].reserved, s.reserved_bytes);
  pool_->Free(b);
}

TEST_F(PoolObserverTest, FreeThenCachedAllocThenEmptyCacheAreEachReported) {
  CachingAllocator::Block* a = pool_->Allocate(4096, nullptr, "first");
  const uintptr_t addr = Addr(a);
  const size_t size = CachingAllocator::Size(a);
  pool_->Free(a);
  CachingAllocator::Block* b = pool_->Allocate(4096, nullptr, "second");
  pool_->Free(b);
  pool_->EmptyCache();

  std::vector<PoolEventKind> kinds;
  for (const Seen& s : seen_) kinds.push_back(s.kind);
  EXPECT_EQ(kinds, (std::vector<PoolEventKind>{PoolEventKind::kSegmentAlloc, PoolEventKind::kAlloc,
                                               PoolEventKind::kFree, PoolEventKind::kAlloc,
                                               PoolEventKind::kFree, PoolEventKind::kSegmentFree}));
  ASSERT_EQ(seen_.size(), 6u);
  EXPECT_EQ(seen_[2].address, addr);
  EXPECT_EQ(seen_[2].bytes, size);
  EXPECT_EQ(seen_[2].owner, "first") << "a free names the op that allocated the block";
  EXPECT_EQ(seen_[2].allocated, 0);
  EXPECT_TRUE(seen_[3].hit);
  EXPECT_EQ(seen_[3].owner, "second");
  EXPECT_EQ(seen_[3].allocated, static_cast<int64_t>(size));
  EXPECT_EQ(seen_[5].address, seen_[0].address);
  EXPECT_EQ(seen_[5].bytes, seen_[0].bytes);
  EXPECT_EQ(seen_[5].reserved, 0);
  for (const Seen& s : seen_) EXPECT_LE(s.allocated, s.reserved);
}

TEST_F(PoolObserverTest, RemovedObserverHearsNothing) {
  pool_->SetObserver(nullptr);
  CachingAllocator::Block* b = pool_->Allocate(100);
  pool_->Free(b);
  pool_->EmptyCache();
  EXPECT_TRUE(seen_.empty());
}

TEST_F(PoolObserverTest, OutOfMemoryRetryReportsTheReleasedSegments) {
  // A cached segment that the retry after a failed growth releases.
  CachingAllocator::Block* small = pool_->Allocate(3 << 20);
  pool_->Free(small);
  const int64_t reserved = pool_->stats().reserved_bytes;  // 4 MiB
  // The next request needs a segment of reserved + 2 MiB: allowed alone, not next to the cache.
  pool_->SetLimit(reserved + (3 << 20));
  seen_.clear();
  CachingAllocator::Block* big = pool_->Allocate(static_cast<size_t>(reserved) + 100);
  ASSERT_GE(seen_.size(), 3u);
  EXPECT_EQ(seen_[0].kind, PoolEventKind::kSegmentFree);
  EXPECT_EQ(seen_[1].kind, PoolEventKind::kSegmentAlloc);
  EXPECT_EQ(seen_[2].kind, PoolEventKind::kAlloc);
  EXPECT_FALSE(seen_[2].hit);
  pool_->Free(big);
}

}  // namespace
}  // namespace ofl::vm
