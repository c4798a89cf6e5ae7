// VmTracer: the VM's trace records of retired instructions and pool events.
#include "vm/vm_tracer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "oneflow_lite/small_object.h"
#include "vm/eager_blob_object.h"
#include "vm/stream.h"

namespace ofl::vm {

namespace {
// The traced instruction this worker is running (0 when none), so that the pool events its
// Prepare and frees cause can name it.
thread_local uint64_t current_traced_instruction OFL_TLS_INITIAL_EXEC = 0;
}  // namespace

uint64_t VmTracer::CurrentTracedInstruction() { return current_traced_instruction; }

void VmTracer::SetCurrentTracedInstruction(uint64_t id) { current_traced_instruction = id; }

void VmTracer::RecordTrace(Instruction* instr) {
  TraceRecord rec;
  rec.id = instr->id();
  rec.policy = instr->policy()->policy_name();
  rec.op = instr->policy()->op_name();
  rec.attrs = instr->policy()->AttrsStr();
  rec.stream = instr->stream()->name();
  rec.issue_thread = instr->issue_thread;
  for (const BlobPtr& b : instr->policy()->reads()) rec.reads.push_back(b->id());
  for (const BlobPtr& b : instr->policy()->writes()) rec.writes.push_back(b->id());
  rec.deps = instr->dep_ids;
  rec.dep_cross_stream = instr->dep_cross_stream;
  rec.allocs = instr->allocs;
  rec.issue_ns = instr->issue_ns;
  rec.ready_ns = instr->ready_ns;
  rec.start_ns = instr->start_ns;
  rec.end_ns = instr->end_ns;
  rec.complete_ns = std::max(instr->end_ns, instr->complete_ns);
  rec.async = !instr->stream()->completion().complete_at_return();
  if (instr->error()) rec.error = instr->error()->message;
  rec.folded_releases.assign(instr->folded_releases.begin(), instr->folded_releases.end());
  std::lock_guard<std::mutex> lock(trace_mu_);
  trace_.push_back(std::move(rec));
}

void VmTracer::OnPoolEvent(const std::string& device, const PoolEvent& event) {
  PoolEventRecord rec;
  rec.ts_ns = NowNs();
  rec.device = device;
  rec.kind = event.kind;
  rec.address = event.address;
  rec.bytes = event.bytes;
  rec.requested = event.requested;
  rec.cache_hit = event.cache_hit;
  rec.owner = event.owner;
  rec.allocated_bytes = event.allocated_bytes;
  rec.reserved_bytes = event.reserved_bytes;
  rec.instruction = CurrentTracedInstruction();
  std::lock_guard<std::mutex> lock(pool_events_mu_);
  pool_events_.push_back(std::move(rec));
}

std::vector<PoolEventRecord> VmTracer::TakePoolEvents() {
  std::lock_guard<std::mutex> lock(pool_events_mu_);
  std::vector<PoolEventRecord> out;
  out.swap(pool_events_);
  return out;
}

std::vector<TraceRecord> VmTracer::TakeRecords() {
  std::lock_guard<std::mutex> lock(trace_mu_);
  std::vector<TraceRecord> out;
  out.swap(trace_);
  std::sort(out.begin(), out.end(),
            [](const TraceRecord& a, const TraceRecord& b) { return a.id < b.id; });
  return out;
}

}  // namespace ofl::vm
