// ofl::memory_snapshot: every segment and block of a device's caching pool (address, size, whether
// it is in use, the op that allocated it), with totals and a fragmentation summary, and a JSON dump
// of it. memory_stats (functional.h) gives the counters; this shows where the bytes are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"

namespace ofl {

struct MemoryBlock {
  uint64_t address = 0;
  int64_t size = 0;           // bytes, after the pool's rounding
  bool allocated = false;     // in use by a live tensor
  bool pending_free = false;  // its tensor died, device work using it has not completed yet;
                              // neither allocated nor free for reuse
  std::string owner;  // the op that allocated it ("repeat", "from_host", ...); empty if free
};

struct MemorySegment {
  uint64_t address = 0;
  int64_t size = 0;                 // bytes obtained from the device at once
  std::vector<MemoryBlock> blocks;  // in address order, covering the segment exactly
};

struct MemorySnapshot {
  Device device{DeviceType::kCPU, 0};
  std::vector<MemorySegment> segments;  // in address order
  // Totals over the blocks; equal memory_stats(device)'s allocated and reserved bytes when no
  // work is running.
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  // Fragmentation: the cached bytes (reserved - allocated - pending_free) and the largest request
  // the cache could serve without asking the device for more.
  int64_t free_bytes = 0;
  int64_t largest_free_block = 0;
  int64_t allocated_blocks = 0;
  int64_t free_blocks = 0;
  int64_t pending_free_bytes = 0;  // memory_stats' pending_free_bytes
  int64_t pending_free_blocks = 0;

  // 1 - largest_free_block / free_bytes: 0 when the cached bytes are one block (or none), near 1
  // when they are scattered in small pieces.
  double fragmentation() const;
  // {"device", "allocated_bytes", "reserved_bytes", "free_bytes", "largest_free_block",
  //  "allocated_blocks", "free_blocks", "pending_free_bytes", "pending_free_blocks",
  //  "fragmentation", "segments": [{"address", "size", "blocks": [{"address", "size",
  //  "state": "allocated"|"pending_free"|"free", "owner"}]}]}
  std::string to_json(int indent = -1) const;
};

// Takes the pool's lock once, so the picture is consistent even while work runs (sync() first to
// see the memory of finished work only). Throws DeviceError for a device this build cannot use.
MemorySnapshot memory_snapshot(const Device& device = Device(DeviceType::kCPU, 0));

}  // namespace ofl
