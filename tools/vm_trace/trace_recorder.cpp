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
  return vm::ToChromeTraceJson(vm::VirtualMachine::Get().StopTraceSession());
}

}  // namespace ofl::vm_trace
