// A device backend whose deallocate frees the memory and then throws (as cudaFree does when it
// returns an earlier asynchronous error): the memory is the backend's from the call on
// (DeviceBackend::deallocate, oneflow_lite/extension.h), so the pool forgets the segment, reports
// the error, and never hands the same pointer to deallocate again: not at the next empty_cache,
// not at shutdown (Close), not when the pool is destroyed. (Close keeps the segments of blocks in
// use, so those are never deallocated at all.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"
#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Memory only: the pool never asks it for streams or events.
class FreeThenThrowBackend : public DeviceBackend {
 public:
  int device_count() override { return 1; }
  void* allocate(int, size_t bytes) override { return std::aligned_alloc(256, bytes); }
  void deallocate(int, void* ptr, size_t) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (++calls_[ptr] == 1) std::free(ptr);  // a second call must not free twice here either
    throw DeviceError("hostile: freed, then reported an earlier asynchronous error");
  }
  NativeStream create_stream(int) override { throw std::logic_error("unused"); }
  void destroy_stream(int, NativeStream) override {}
  NativeEvent create_event(int) override { throw std::logic_error("unused"); }
  void destroy_event(int, NativeEvent) override {}
  void record_event(NativeEvent, NativeStream) override {}
  bool query_event(NativeEvent) override { return true; }
  void synchronize_event(NativeEvent) override {}
  void stream_wait_event(NativeStream, NativeEvent) override {}
  void copy_async(void*, const void*, size_t, CopyKind, NativeStream) override {}

  // deallocate calls per pointer.
  std::map<void*, int> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::map<void*, int> calls_;
};

void ExpectEachDeallocatedOnce(FreeThenThrowBackend& backend, size_t segments) {
  const std::map<void*, int> calls = backend.calls();
  EXPECT_EQ(calls.size(), segments);
  for (const auto& [ptr, n] : calls) EXPECT_EQ(n, 1) << "deallocate called " << n << " times";
}

TEST(ThrowingDeallocateTest, EmptyCacheReportsTheErrorAndShutdownNeverDeallocatesTwice) {
  FreeThenThrowBackend backend;
  CachingAllocator pool(Device("sim:0"), std::make_unique<DeviceMemoryBackend>(&backend, 0));
  CachingAllocator::Block* cached = pool.Allocate(4 * kMiB);  // a segment of its own
  CachingAllocator::Block* live = pool.Allocate(512);         // a small segment, kept in use
  // Cached only at shutdown; taken now, so that its address cannot be the first one's again.
  CachingAllocator::Block* late = pool.Allocate(6 * kMiB);
  pool.Free(cached);
  try {
    pool.EmptyCache();
    ADD_FAILURE() << "EmptyCache did not report the failed deallocate";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("sim:0"), std::string::npos) << what;
    EXPECT_NE(what.find("hostile: freed"), std::string::npos) << what;
    EXPECT_NE(what.find("the backend owns it"), std::string::npos) << what;
  }
  // The pool forgot the segment: it counts only the ones still in use.
  EXPECT_EQ(pool.stats().reserved_bytes, static_cast<int64_t>((2 + 6) * kMiB));
  ExpectEachDeallocatedOnce(backend, 1);
  EXPECT_NO_THROW(pool.EmptyCache());  // nothing cached is left: no call at all
  ExpectEachDeallocatedOnce(backend, 1);

  // Shutdown returns a newly cached segment (that deallocate throws too), reported once the pool
  // is closed; it never returns the first again, nor the segment in use, which it keeps for good.
  pool.Free(late);
  try {
    pool.Close();
    ADD_FAILURE() << "Close did not report the failed deallocate";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("hostile: freed"), std::string::npos) << e.what();
  }
  ExpectEachDeallocatedOnce(backend, 2);
  EXPECT_THROW(pool.Allocate(512), Error);  // closed all the same
  pool.Free(live);                          // a tensor dying after shutdown: a no-op
  EXPECT_NO_THROW(pool.Close());
  ExpectEachDeallocatedOnce(backend, 2);
}

TEST(ThrowingDeallocateTest, AClosedPoolDestroyedNeverDeallocatesTheSegmentsItKept) {
  FreeThenThrowBackend backend;
  {
    CachingAllocator pool(Device("sim:0"), std::make_unique<DeviceMemoryBackend>(&backend, 0));
    pool.Allocate(4 * kMiB);  // in use at shutdown: a capsule may still read it
    pool.Allocate(512);
    EXPECT_NO_THROW(pool.Close());
  }
  EXPECT_TRUE(backend.calls().empty());
}

TEST(ThrowingDeallocateTest, EveryCachedSegmentIsReturnedOnceEvenWhenTheFirstThrows) {
  FreeThenThrowBackend backend;
  {
    CachingAllocator pool(Device("sim:0"), std::make_unique<DeviceMemoryBackend>(&backend, 0));
    CachingAllocator::Block* blocks[3] = {pool.Allocate(4 * kMiB), pool.Allocate(6 * kMiB),
                                          pool.Allocate(8 * kMiB)};
    for (CachingAllocator::Block* b : blocks) pool.Free(b);
    EXPECT_THROW(pool.EmptyCache(), DeviceError);
    EXPECT_EQ(pool.stats().reserved_bytes, 0);
    ExpectEachDeallocatedOnce(backend, 3);
    // Destroyed without Close: the segments are gone already, nothing is deallocated again.
  }
  ExpectEachDeallocatedOnce(backend, 3);
}

TEST(ThrowingDeallocateTest, ThePoolDestructorSwallowsTheErrorAndDeallocatesEachSegmentOnce) {
  FreeThenThrowBackend backend;
  {
    CachingAllocator pool(Device("sim:0"), std::make_unique<DeviceMemoryBackend>(&backend, 0));
    pool.Allocate(4 * kMiB);
    pool.Allocate(6 * kMiB);
  }
  ExpectEachDeallocatedOnce(backend, 2);
}

}  // namespace
}  // namespace ofl::vm
