// The caching memory pool: one per device. Blocks come from large segments obtained from a backend
// (the C library for the CPU, a DeviceBackend for every other device), are split to fit a request,
// cached when freed, merged with free neighbours, and handed out again without touching the
// backend. On out-of-memory the pool frees its cached segments, retries once, then throws
// OutOfMemory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/memory_stats.h"

namespace ofl::vm {

// Where segments come from. Allocate returns nullptr on failure (never throws for lack of memory).
class AllocatorBackend {
 public:
  virtual ~AllocatorBackend() = default;
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr, size_t bytes) = 0;
  // Appended to out-of-memory messages (the device's free/total memory); empty for nothing.
  virtual std::string MemoryInfo() { return {}; }
};

// Segments from a device backend (oneflow_lite/extension.h). The pool is shared by the device's
// streams; it stays safe on an asynchronous device because a block returns to it only once every
// use of it is complete (see ReleaseTensorPolicy and VirtualMachine::Finish), so a block in the
// pool is never still read or written by the device.
class DeviceMemoryBackend : public AllocatorBackend {
 public:
  DeviceMemoryBackend(DeviceBackend* backend, int index) : backend_(backend), index_(index) {}
  void* Allocate(size_t bytes) override { return backend_->allocate(index_, bytes); }
  void Free(void* ptr, size_t bytes) override { backend_->deallocate(index_, ptr, bytes); }
  std::string MemoryInfo() override { return backend_->memory_info(index_); }

 private:
  DeviceBackend* backend_;
  int index_;
};

// Host staging memory from a device backend's allocate_host (pinned for CUDA), for the pool of
// staging buffers that host <-> device transfers go through.
class HostStagingBackend : public AllocatorBackend {
 public:
  explicit HostStagingBackend(DeviceBackend* backend) : backend_(backend) {}
  void* Allocate(size_t bytes) override { return backend_->allocate_host(bytes); }
  void Free(void* ptr, size_t bytes) override { backend_->deallocate_host(ptr, bytes); }

 private:
  DeviceBackend* backend_;
};

// One entry of a memory snapshot.
struct BlockInfo {
  uintptr_t address = 0;
  size_t size = 0;
  bool allocated = false;     // in use by a live tensor
  bool pending_free = false;  // its tensor died; returns to the cache when the device is done
  std::string owner;          // who allocated it (an op name), empty when free
};
struct SegmentInfo {
  uintptr_t address = 0;
  size_t size = 0;
  std::vector<BlockInfo> blocks;  // in address order, covering the whole segment
};

// What a pool observer is told: one allocation, free or segment change, with the pool's totals
// right after it.
enum class PoolEventKind : uint8_t { kAlloc, kFree, kSegmentAlloc, kSegmentFree };
const char* to_string(PoolEventKind kind);  // "alloc", "free", "segment_alloc", "segment_free"

struct PoolEvent {
  PoolEventKind kind = PoolEventKind::kAlloc;
  uintptr_t address = 0;        // the block's (alloc, free) or the segment's address
  size_t bytes = 0;             // the block's rounded size, or the segment's size
  size_t requested = 0;         // alloc only: the bytes asked for
  bool cache_hit = false;       // alloc only: served from a cached block
  const char* owner = "";       // the op that allocated the block; "" for segment events. Valid
                                // only during the call.
  int64_t allocated_bytes = 0;  // after the event
  int64_t reserved_bytes = 0;   // after the event
};
using PoolObserver = std::function<void(const PoolEvent&)>;

class CachingAllocator {
 public:
  struct Block;  // opaque to callers

  // Every block's address is aligned to at least kAlignment bytes.
  static constexpr size_t kAlignment = 64;

  // `name` (default: the device's) is what errors and snapshots call the pool.
  CachingAllocator(Device device, std::unique_ptr<AllocatorBackend> backend, std::string name = "");
  ~CachingAllocator();  // returns every segment it still has to the backend (none after Close)
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // bytes must be > 0. Sets *cache_hit (when non-null) to whether a cached block served it.
  // `owner` is recorded for snapshots (may be null). Throws OutOfMemory after one retry with the
  // cache emptied; the message names the device, the bytes asked for, allocated, reserved and the
  // largest free block.
  Block* Allocate(size_t bytes, bool* cache_hit = nullptr, const char* owner = nullptr);
  // Allocate, served only from a cached block: null (and nothing counted) when no cached block
  // fits, bytes is 0, the pool is closed or a fault is armed (SetFailAt). Never calls the backend,
  // so it never fails for lack of memory.
  Block* TryAllocateCached(size_t bytes, const char* owner = nullptr);
  void Free(Block* block);
  // The block's tensor died but device work using it may still be pending: from now on it counts
  // as free in stats() (and the observer hears kFree), though it is not handed out again until
  // Free, which must still follow once that work is complete (see vm/THREADING.md, "Memory").
  void MarkDead(Block* block);
  static void* Data(const Block* block);
  static size_t Size(const Block* block);  // the rounded size actually reserved for the block

  // A record for memory that no pool owns (ofl::from_blob: the caller's), so that a blob holding
  // it reads its address through Data() like any block's, with no test on the per-op path. It
  // carries the function that gives the memory back to its owner. It never enters a pool: no
  // stats, snapshots or observer events; Free and MarkDead of a pool must never see it.
  static Block* NewExternalBlock(void* data, size_t bytes, std::function<void()> on_release);
  // Deletes the record and returns its function without calling it (the caller decides where and
  // how to run the owner's code).
  static std::function<void()> DeleteExternalBlock(Block* block) noexcept;

  MemoryStats stats() const;
  // The peaks start again from the current allocated and reserved bytes.
  void ResetPeakStats();
  // Returns every segment with no allocated block to the backend. A segment whose deallocate
  // threw is forgotten all the same (the backend owns it, extension.h); once every segment was
  // tried, DeviceError names the first failure.
  void EmptyCache();
  // Shutdown: returns every segment with no block in use to the backend, as EmptyCache does, and
  // keeps the others for good, never returned, not even when the pool is destroyed: a block in use
  // (pending free included) may belong to a tensor, a DLPack capsule or a view that outlives the
  // runtime and still reads it; that memory goes back with the process. Afterwards the stats are
  // zero, Allocate throws Error and Free and MarkDead do nothing (tensors that outlive the runtime
  // may still die). A failed deallocate is reported as by EmptyCache, once the pool is closed.
  void Close();
  // Caps reserved bytes (a segment that would cross the cap is not requested). < 0 throws
  // InvalidArgument; 0 means "no limit".
  void SetLimit(int64_t bytes);
  int64_t limit() const;
  std::vector<SegmentInfo> Snapshot() const;
  const Device& device() const { return device_; }
  // Installs (or, with an empty function, removes) the one observer of this pool. It is called
  // under the pool's lock on the thread that allocates or frees, so it must be quick and must not
  // call back into this pool. With no observer the pool pays one predictable branch per event.
  void SetObserver(PoolObserver observer);

  // Test-only fault injection: the n-th Allocate request from now on (n >= 1) fails as if the
  // backend had no memory even after the cache was emptied, so it throws OutOfMemory (its message
  // says the failure was injected); the requests after it succeed again. 0 turns the hook off;
  // < 0 throws InvalidArgument. Off, Allocate pays one relaxed atomic load.
  void SetFailAt(int64_t n);
  // Requests left until the injected failure (0: none armed).
  int64_t fail_at() const { return fail_countdown_.load(std::memory_order_relaxed); }

 private:
  struct Impl;
  Device device_;
  std::unique_ptr<Impl> impl_;
  // Counts down once per Allocate while > 0; the request that takes it from 1 to 0 fails.
  std::atomic<int64_t> fail_countdown_{0};
};

}  // namespace ofl::vm
