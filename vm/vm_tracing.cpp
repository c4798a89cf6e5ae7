// The VirtualMachine's tracing: trace records of retired instructions, pool observers, trace
// sessions (ofl::trace::start / stop, OFL_TRACE).
#include <algorithm>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "vm/chrome_trace.h"
#include "vm/log.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

void VirtualMachine::RecordTrace(Instruction* instr) {
  TraceRecord rec;
  rec.id = instr->id();
  rec.policy = instr->policy()->policy_name();
  rec.op = instr->policy()->op_name();
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
  rec.async = instr->stream()->async();
  if (instr->error()) rec.error = instr->error()->message;
  rec.folded_releases.assign(instr->folded_releases.begin(), instr->folded_releases.end());
  std::lock_guard<std::mutex> lock(trace_mu_);
  trace_.push_back(std::move(rec));
}

void VirtualMachine::SetTracing(bool on) {
  if (on && !tracing_.load()) trace_origin_ns_.store(NowNs());
  devices_.ObservePools(on);
  tracing_.store(on);
}

void VirtualMachine::OnPoolEvent(const std::string& device, const PoolEvent& event) {
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

std::vector<PoolEventRecord> VirtualMachine::TakePoolEvents() {
  std::lock_guard<std::mutex> lock(pool_events_mu_);
  std::vector<PoolEventRecord> out;
  out.swap(pool_events_);
  return out;
}

void VirtualMachine::StartTraceSession() {
  tracing_.store(false);
  TakeTrace();
  TakePoolEvents();
  SetTracing(true);
}

TraceSession VirtualMachine::StopTraceSession() {
  tracing_.store(false);
  try {
    WaitForAllIssued("ofl::trace::stop");
  } catch (const Error& e) {
    Logger().warn("trace: stopping without the instructions that did not finish: {}", e.what());
  }
  devices_.ObservePools(false);
  TraceSession session;
  session.records = TakeTrace();
  session.pool_events = TakePoolEvents();
  for (Stream* s : devices_.streams()) session.stream_names.push_back(s->name());
  session.origin_ns = trace_origin_ns_.load();
  return session;
}

std::vector<TraceRecord> VirtualMachine::TakeTrace() {
  {
    Graveyard graveyard;
    std::lock_guard<SubmitMutex> lock(submit_mu_);
    Reap(true, &graveyard);
  }
  std::lock_guard<std::mutex> lock(trace_mu_);
  std::vector<TraceRecord> out;
  out.swap(trace_);
  std::sort(out.begin(), out.end(),
            [](const TraceRecord& a, const TraceRecord& b) { return a.id < b.id; });
  return out;
}

}  // namespace ofl::vm
