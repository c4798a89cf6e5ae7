// The VirtualMachine's tracing switch and trace sessions (ofl::trace::start / stop, OFL_TRACE); the
// records themselves are kept by its VmTracer.
#include <algorithm>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "vm/chrome_trace.h"
#include "vm/log.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

std::vector<PoolEventRecord> VirtualMachine::TakePoolEvents() { return tracer_.TakePoolEvents(); }

void VirtualMachine::SetTracing(bool on) {
  if (on) tracer_.StartClockIfOff();
  devices_.ObservePools(on);
  tracer_.set_tracing(on);
}

void VirtualMachine::StartTraceSession() {
  tracer_.set_tracing(false);
  TakeTrace();
  TakePoolEvents();
  SetTracing(true);
}

TraceSession VirtualMachine::StopTraceSession() {
  tracer_.set_tracing(false);
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
  session.origin_ns = tracer_.origin_ns();
  return session;
}

std::vector<TraceRecord> VirtualMachine::TakeTrace() {
  engine_.ReapAll();
  return tracer_.TakeRecords();
}

}  // namespace ofl::vm
