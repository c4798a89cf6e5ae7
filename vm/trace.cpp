// Tracing helpers that need no VM state: the clock, per-thread indices for the issuing threads, and
// attributing pool events to the blobs they served.
#include "vm/trace.h"

#include <atomic>
#include <chrono>
#include <unordered_map>

namespace ofl::vm {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int TraceThreadIndex() {
  static std::atomic<int> next{0};
  thread_local const int index = next.fetch_add(1, std::memory_order_relaxed);
  return index;
}

void AttributePoolEvents(const std::vector<TraceRecord>& records,
                         std::vector<PoolEventRecord>* events) {
  std::unordered_map<uint64_t, const TraceRecord*> by_id;
  by_id.reserve(records.size());
  for (const TraceRecord& r : records) by_id[r.id] = &r;
  std::unordered_map<uint64_t, size_t> allocs_seen;  // instruction -> alloc events so far
  // Per device: block address -> blob that holds it now.
  std::unordered_map<std::string, std::unordered_map<uintptr_t, uint64_t>> live;
  for (PoolEventRecord& e : *events) {
    if (e.kind == PoolEventKind::kAlloc) {
      if (e.blob == 0 && e.instruction != 0) {
        const size_t k = allocs_seen[e.instruction]++;
        auto it = by_id.find(e.instruction);
        if (it != by_id.end() && k < it->second->allocs.size() &&
            it->second->allocs[k].bytes == e.requested) {
          e.blob = it->second->allocs[k].blob_id;
        }
      }
      if (e.blob != 0) {
        live[e.device][e.address] = e.blob;
      } else {
        live[e.device].erase(e.address);
      }
    } else if (e.kind == PoolEventKind::kFree) {
      auto& blocks = live[e.device];
      auto it = blocks.find(e.address);
      if (it != blocks.end()) {
        if (e.blob == 0) e.blob = it->second;
        blocks.erase(it);
      }
    }
  }
}

}  // namespace ofl::vm
