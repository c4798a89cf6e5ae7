// What the VM records while tracing is on: a TraceRecord per finished instruction and a
// PoolEventRecord per allocation, free and segment change of a watched pool, plus the session that
// bundles them for the Chrome trace writer (vm/chrome_trace.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vm/allocator/caching_allocator.h"
#include "vm/instruction.h"

namespace ofl::vm {

struct TraceRecord {
  uint64_t id = 0;
  std::string policy;
  std::string op;
  std::string attrs;  // the op call's attributes by name ("dim=1, start=0, length=2")
  std::string stream;
  int issue_thread = 0;          // small index of the OS thread that issued it (0, 1, ...)
  std::vector<uint64_t> reads;   // blob ids
  std::vector<uint64_t> writes;  // blob ids
  std::vector<uint64_t> deps;    // predecessor instruction ids
  std::vector<bool> dep_cross_stream;
  std::vector<AllocRecord> allocs;
  std::vector<uint64_t> folded_releases;  // blobs freed right after it ran (their tensors died)
  int64_t issue_ns = 0, ready_ns = 0, start_ns = 0;
  int64_t end_ns = 0;       // launched: its worker returned from it
  int64_t complete_ns = 0;  // its work finished (== end_ns on a synchronous device)
  bool async = false;       // ran on an asynchronous device's stream
  std::string error;        // empty when it succeeded
};

// One event of a watched caching pool (see CachingAllocator::SetObserver).
struct PoolEventRecord {
  int64_t ts_ns = 0;   // NowNs() when it happened
  std::string device;  // "cpu:0"
  PoolEventKind kind = PoolEventKind::kAlloc;
  uintptr_t address = 0;        // block or segment
  size_t bytes = 0;             // block size (rounded) or segment size
  size_t requested = 0;         // alloc only
  bool cache_hit = false;       // alloc only
  std::string owner;            // op that allocated the block; empty for segment events
  int64_t allocated_bytes = 0;  // pool totals after the event
  int64_t reserved_bytes = 0;
  uint64_t instruction = 0;  // traced instruction running on this thread when it happened, or 0
  uint64_t blob = 0;         // blob that got / gave back the block, 0 when unknown (see below)
};

// Everything one trace holds. origin_ns is when tracing started (0: the earliest timestamp).
struct TraceSession {
  std::vector<TraceRecord> records;          // by id
  std::vector<PoolEventRecord> pool_events;  // in the order each pool saw them
  std::vector<std::string> stream_names;     // DeviceRegistry::streams() order
  int64_t origin_ns = 0;
};

int64_t NowNs();

// A small index for the calling OS thread, assigned on first use in the order threads ask (0, 1,
// ...). Only called while tracing.
int TraceThreadIndex();

// Fills in PoolEventRecord::blob where the pool could not know it: the k-th alloc event an
// instruction caused is its k-th AllocRecord (both follow Prepare's order), and a free is matched
// to the blob that last got a block at that address. Leaves events it cannot attribute at 0.
void AttributePoolEvents(const std::vector<TraceRecord>& records,
                         std::vector<PoolEventRecord>* events);

}  // namespace ofl::vm
