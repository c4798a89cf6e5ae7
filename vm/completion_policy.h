// CompletionPolicy: how the work of a stream's instructions completes, the one place the VM tells
// a synchronous device from an asynchronous one (vm/THREADING.md, "Completion"). The VM's
// scheduling, waits and direct runs are written once and ask the stream's policy where the two
// differ:
//
//   HostCompletion    a synchronous backend (the CPU): an instruction is complete when its worker
//                     returns from it, so the worker finishes it at once, a successor just waits
//                     for it to finish, and the issuing thread may run small work itself.
//   DeviceCompletion  an asynchronous backend (sim, cuda): the worker's return *launches* the work.
//                     The stream records a completion event and finishes the instruction when the
//                     event completes (its completion thread, or a waiter's poll); a successor on
//                     the same device waits on the device for the event, never on the host; nothing
//                     runs on the issuing thread.
//
// The policies hold no state of their own: one of each serves every stream (Stream::completion()).
#pragma once

namespace ofl::vm {

class Instruction;
class VirtualMachine;

// The rules of asynchronous devices a test may break on purpose in a child process, to show that
// the sim suites catch the breach (VmTesting::BreakRule; tests/functional/device_semantics_test).
enum class BrokenRule {
  kNone,
  kCompleteAtLaunch,  // an instruction counts as complete when it launched
  kNoDeviceWait,      // a successor on the same device skips its wait on the device
  kFreeAtLaunch,      // a launched instruction's dead blocks go back to the pool at launch
};

class CompletionPolicy {
 public:
  virtual ~CompletionPolicy() = default;

  // Whether an instruction is complete when its worker returns from it. Where it is, the issuing
  // thread may run small work itself (inline runs, direct runs and reads, vm/THREADING.md) and
  // take a block from the pool's cache at issue. (A field, not a virtual call: the per-op paths
  // read it.)
  bool complete_at_return() const { return complete_at_return_; }
  // What the worker's return means, for the debug log: "done" or "launched".
  virtual const char* returned() const = 0;
  // Called by whoever ran `instr` (its worker, or an issuing thread running it inline) when the
  // run returned: finishes it, or hands it to the stream to finish once the device completes it.
  virtual void AfterRun(VirtualMachine& vm, Instruction* instr) const = 0;
  // Orders `instr`, about to run on its stream, after `pred`, an earlier instruction it depends
  // on: waits for pred to finish, or (the same asynchronous device) on the device for its event.
  virtual void OrderAfter(VirtualMachine& vm, Instruction* instr, Instruction* pred) const = 0;
  // Observes completions without blocking; whether `instr` is done afterwards.
  virtual bool Poll(Instruction* instr) const = 0;
  // Blocks until the device completed `instr`'s work (nothing on a synchronous device: its worker
  // finishes it). The caller then waits for it to be finished (VirtualMachine::WaitDone).
  virtual void WaitDevice(VirtualMachine& vm, Instruction* instr) const = 0;
  // WaitDevice for a wait that reports hangs: false when it gave up (no instruction completed
  // anywhere for the hang timeout). Throws WaitInterrupted as the VM's waits do.
  virtual bool WaitDeviceOrGiveUp(VirtualMachine& vm, Instruction* instr) const = 0;

  // The policy of a backend: synchronous() ? HostCompletion : DeviceCompletion.
  static const CompletionPolicy& For(bool synchronous);
  // The rule broken in this process (kNone but in a test's child).
  static BrokenRule broken_rule();
  static void BreakRule(BrokenRule rule);  // only VmTesting::BreakRule, first thing in a child

 protected:
  explicit CompletionPolicy(bool complete_at_return) : complete_at_return_(complete_at_return) {}

 private:
  const bool complete_at_return_;
};

}  // namespace ofl::vm
