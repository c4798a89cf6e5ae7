// Records through the VM's trace session (vm/virtual_machine.h) and the library's Chrome trace
// writer (vm/chrome_trace.h).
#include "tools/vm_trace/trace_recorder.h"

#include "vm/chrome_trace.h"
#include "vm/virtual_machine.h"

namespace ofl::vm_trace {

void TraceRecorder::Start() {
  vm::VirtualMachine& vm = vm::VirtualMachine::Get();
  vm.Sync();
  vm.StartTraceSession();
}

std::string TraceRecorder::Stop() {
  const vm::TraceSession session = vm::VirtualMachine::Get().StopTraceSession();
  origin_ns_ = session.origin_ns;
  return vm::ToChromeTraceJson(session);
}

}  // namespace ofl::vm_trace
