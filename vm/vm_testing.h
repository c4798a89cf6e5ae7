// VmTesting: the VirtualMachine's switches and counters that exist only for tests and benchmarks
// (the hang timeout, the exit stall, the inline limit, the in-flight peak, direct-run and
// direct-read counts, breaking a rule of asynchronous devices). Library code never uses it.
#pragma once

#include <cstdint>

#include "vm/completion_policy.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

class VmTesting {
 public:
  // The hang timeout of Wait and Sync (OFL_VM_TIMEOUT_SECONDS); <= 0 waits forever.
  static void SetWaitTimeout(double seconds) { VirtualMachine::Get().SetWaitTimeout(seconds); }
  // How long the exit drain waits with no progress (OFL_VM_EXIT_STALL_MS).
  static void SetExitStallMs(int64_t ms) {
    VirtualMachine::Get().exit_stall_ns_.store(ms * 1000000);
  }
  // OFL_VM_INLINE_BYTES (vm/THREADING.md, "Inline runs").
  static void SetInlineBytes(int64_t bytes) {
    VirtualMachine::Get().inline_bytes_.store(bytes, std::memory_order_relaxed);
  }
  // The most instructions in flight at once since the VM started (or the last reset).
  static int64_t peak_in_flight() { return VirtualMachine::Get().pressure_.peak(); }
  static void ResetPeakInFlight() { VirtualMachine::Get().pressure_.ResetPeak(); }
  // Op calls run by TryRunOpDirect, and reads done by TryReadDirect, since the VM started.
  static int64_t direct_runs() {
    return VirtualMachine::Get().direct_runs_.load(std::memory_order_relaxed);
  }
  static int64_t direct_reads() {
    return VirtualMachine::Get().direct_reads_.load(std::memory_order_relaxed);
  }
  // Breaks one rule of asynchronous devices (vm/THREADING.md), to show that the sim suites catch
  // it. Call it first thing in a child process; there is no way back.
  static void BreakRule(BrokenRule rule) { CompletionPolicy::BreakRule(rule); }
};

}  // namespace ofl::vm
