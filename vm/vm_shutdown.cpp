// The VirtualMachine's end: the exit hook (drain, then write the OFL_TRACE file) and Shutdown.
#include <chrono>
#include <thread>

#include "vm/chrome_trace.h"
#include "vm/log.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

void VirtualMachine::AtExit() {
  VirtualMachine& vm = Get();
  vm.Shutdown();
  if (vm.trace_path_.empty() || !vm.tracing()) return;
  try {
    const TraceSession session = vm.StopTraceSession();
    WriteChromeTrace(vm.trace_path_, session);
    Logger().info("trace: wrote {} instruction(s) to {}", session.records.size(), vm.trace_path_);
  } catch (const std::exception& e) {
    Logger().error("OFL_TRACE: {}", e.what());
  }
}

void VirtualMachine::Shutdown() {
  // Let queued work finish while it makes progress; give up on work that is stuck (a callback
  // waiting for something that will never come) so that exit never hangs.
  const int64_t stall_ns = exit_stall_ns_;
  int64_t last = PendingCount();
  int64_t last_change = NowNs();
  while (PendingCount() > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const int64_t now = PendingCount();
    if (now != last) {
      last = now;
      last_change = NowNs();
    } else if (NowNs() - last_change > stall_ns) {
      Logger().warn("exiting with {} instruction(s) still in flight that made no progress", now);
      break;
    }
  }
  shut_down_.store(true);
  std::lock_guard<std::mutex> lock(done_mu_);
  done_cv_.notify_all();
}

}  // namespace ofl::vm
