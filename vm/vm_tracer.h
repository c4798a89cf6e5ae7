// VmTracer: the VM's tracing state. While tracing is on, each retired instruction leaves a
// TraceRecord and every pool event becomes a PoolEventRecord naming the traced instruction that
// caused it; a trace session takes them all. Also holds the OFL_TRACE path written at exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "vm/allocator/caching_allocator.h"
#include "vm/instruction.h"
#include "vm/trace.h"

namespace ofl::vm {

class VmTracer {
 public:
  // The one flag the per-op paths read (a relaxed load).
  bool tracing() const { return tracing_.load(std::memory_order_relaxed); }
  void set_tracing(bool on) { tracing_.store(on); }
  // Restarts the trace clock unless tracing is on already.
  void StartClockIfOff() {
    if (!tracing_.load()) trace_origin_ns_.store(NowNs());
  }
  void StartClock() { trace_origin_ns_ = NowNs(); }
  int64_t origin_ns() const { return trace_origin_ns_.load(); }

  // OFL_TRACE: the file written at exit (empty: none).
  const std::string& trace_path() const { return trace_path_; }
  void set_trace_path(const std::string& path) { trace_path_ = path; }

  // Keeps a retired traced instruction's TraceRecord.
  void RecordTrace(Instruction* instr);
  // A pool's event while pools are observed; names the traced instruction this thread runs.
  void OnPoolEvent(const std::string& device, const PoolEvent& event);
  // Every record kept so far, by instruction id (the caller retired the finished instructions).
  std::vector<TraceRecord> TakeRecords();
  std::vector<PoolEventRecord> TakePoolEvents();

  // The traced instruction this worker is running (0 when none), so that the pool events its
  // Prepare and frees cause can name it.
  static uint64_t CurrentTracedInstruction();
  static void SetCurrentTracedInstruction(uint64_t id);

 private:
  std::atomic<bool> tracing_{false};
  std::mutex trace_mu_;
  std::vector<TraceRecord> trace_;
  std::atomic<int64_t> trace_origin_ns_{0};
  std::mutex pool_events_mu_;  // taken under a pool's lock (by its observer)
  std::vector<PoolEventRecord> pool_events_;
  std::string trace_path_;  // OFL_TRACE: written at exit
};

}  // namespace ofl::vm
