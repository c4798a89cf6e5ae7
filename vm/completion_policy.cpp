#include "vm/completion_policy.h"

#include <exception>

#include "vm/instruction.h"
#include "vm/log.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

namespace {

BrokenRule broken = BrokenRule::kNone;  // set before any other thread exists, then only read

class HostCompletion final : public CompletionPolicy {
 public:
  HostCompletion() : CompletionPolicy(/*complete_at_return=*/true) {}
  const char* returned() const override { return "done"; }
  void AfterRun(VirtualMachine& vm, Instruction* instr) const override { vm.Finish(instr); }
  void OrderAfter(VirtualMachine& vm, Instruction*, Instruction* pred) const override {
    vm.WaitFinished(pred);
  }
  bool Poll(Instruction* instr) const override { return instr->done(); }
  void WaitDevice(VirtualMachine&, Instruction*) const override {}
  bool WaitDeviceOrGiveUp(VirtualMachine&, Instruction*) const override { return true; }
};

class DeviceCompletion final : public CompletionPolicy {
 public:
  DeviceCompletion() : CompletionPolicy(/*complete_at_return=*/false) {}
  const char* returned() const override { return "launched"; }

  void AfterRun(VirtualMachine& vm, Instruction* instr) const override {
    if (broken == BrokenRule::kFreeAtLaunch) vm.ReleaseBlocks(instr);
    instr->stream()->TrackLaunched(instr);  // from here on another thread may finish it
  }

  void OrderAfter(VirtualMachine& vm, Instruction* instr, Instruction* pred) const override {
    Stream* self = instr->stream();
    Stream* ps = pred->stream();
    if (ps->completion().complete_at_return() || ps->device() != self->device()) {
      // Another device or the host: its work must be complete.
      vm.WaitFinished(pred);
      return;
    }
    // The same asynchronous device: wait on the device, never for completion on the host.
    vm.WaitLaunched(pred);
    if (pred->done() || pred->event() == nullptr) return;
    if (broken == BrokenRule::kNoDeviceWait) return;
    try {
      self->backend()->stream_wait_event(self->native(), pred->event());
    } catch (const std::exception& e) {
      Logger().warn("[#{} {}] stream_wait_event failed ({}); waiting for #{} on the host instead",
                    instr->id(), self->name(), e.what(), pred->id());
      vm.WaitFinished(pred);
    }
  }

  bool Poll(Instruction* instr) const override {
    if (instr->done()) return true;
    if (!instr->launched()) return false;
    // Observing the completion here costs no hand-off from the stream's completion thread.
    instr->stream()->PollCompletions();
    return instr->done();
  }

  void WaitDevice(VirtualMachine& vm, Instruction* instr) const override {
    vm.WaitLaunched(instr);
    instr->stream()->SyncAndPoll(instr);
  }

  bool WaitDeviceOrGiveUp(VirtualMachine& vm, Instruction* instr) const override {
    // Launched, it waits for nothing but device work issued before it, which completes without
    // host action: no hang report covers that part, as none does in cudaEventSynchronize.
    if (!vm.WaitLaunchedOrGiveUp(instr)) return false;
    // The backend's wait cannot be interrupted: where the program asks to be (an `interrupted`
    // hook: Python's Ctrl-C), the wait sleeps on the VM's condition in polls instead, woken by the
    // stream's completion thread, which blocks in that same backend wait (THREADING.md).
    if (!vm.Interruptible()) instr->stream()->SyncAndPoll(instr);
    return true;
  }
};

const HostCompletion host_completion;
const DeviceCompletion device_completion;

}  // namespace

const CompletionPolicy& CompletionPolicy::For(bool synchronous) {
  if (synchronous) return host_completion;
  return device_completion;
}

BrokenRule CompletionPolicy::broken_rule() { return broken; }
void CompletionPolicy::BreakRule(BrokenRule rule) { broken = rule; }

}  // namespace ofl::vm
