// InstructionsBuilder: the one way to make instructions. Functors build a batch with it inside
// PhysicalRun, which hands the batch to the VM in one submission.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "vm/instruction.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

class InstructionsBuilder {
 public:
  // stream == nullptr: the compute stream of the first output's (or the accessed blob's) device.
  // The first op call of a batch may run at once, with no instruction
  // (VirtualMachine::TryRunOpDirect): then the reference returned is null.
  InstrRef OpCall(std::string op_name, kernels::KernelFn kernel, std::vector<BlobArg> inputs,
                  std::vector<BlobArg> outputs, const Attrs& attrs = {}, Stream* stream = nullptr);
  // The same, for operands written in place (`{x.arg()}`): no vector is made for them.
  InstrRef OpCall(std::string op_name, kernels::KernelFn kernel,
                  std::initializer_list<BlobArg> inputs, std::initializer_list<BlobArg> outputs,
                  const Attrs& attrs = {}, Stream* stream = nullptr);
  // caller_memory, bounded_copy: see AccessBlobByCallbackPolicy.
  InstrRef AccessBlobByCallback(std::string op_name, BlobArg arg,
                                AccessBlobByCallbackPolicy::Callback cb, AccessModifier modifier,
                                Stream* stream = nullptr, bool caller_memory = false,
                                bool bounded_copy = false);
  // On the blob's producer stream, after every earlier reader and writer.
  InstrRef ReleaseTensor(BlobPtr blob);
  InstrRef Barrier(Stream* stream);
  // Any other policy (DeviceCopyPolicy, ...) on the given stream.
  InstrRef Policy(Stream* stream, std::unique_ptr<InstructionPolicy> policy) {
    return Add(stream, std::move(policy));
  }
  InstrRef Function(std::string op_name, std::vector<BlobPtr> reads, std::vector<BlobPtr> writes,
                    std::function<void()> fn, Stream* stream);

  SmallObjectVector<InstrRef>& instructions() { return instructions_; }

 private:
  InstrRef Add(Stream* stream, std::unique_ptr<InstructionPolicy> policy);
  InstrRef OpCall(std::string op_name, kernels::KernelFn kernel, OpCallPolicy::Operands inputs,
                  OpCallPolicy::Operands outputs, const Attrs& attrs, Stream* stream);
  SmallObjectVector<InstrRef> instructions_;
};

// While it lives, the op calls this thread builds are named "<scope>.<op>" ("MulBackward.mul"), so
// that traces and error messages show what issued them. Nests (the inner scope wins); `scope` must
// outlive the object.
class OpNameScope {
 public:
  explicit OpNameScope(const char* scope);
  ~OpNameScope();
  OpNameScope(const OpNameScope&) = delete;
  OpNameScope& operator=(const OpNameScope&) = delete;

 private:
  const char* prev_;
};

// While it lives, the op calls this thread builds take `name` instead of their own op name (the
// outermost one wins when they nest; an OpNameScope still prefixes it): the calls an op composed of
// other ops issues carry the composed op's name ("repeat_backward"), in traces and errors.
class ComposedOpName {
 public:
  explicit ComposedOpName(const char* name);
  ~ComposedOpName();
  ComposedOpName(const ComposedOpName&) = delete;
  ComposedOpName& operator=(const ComposedOpName&) = delete;

 private:
  const char* prev_;
};

// Builds a batch with fn and submits it. In OFL_VM_SYNC=1 mode it also waits for the batch and
// throws the first error raised by it, so every error surfaces at the call that caused it (except
// on a VM worker, inside a callback or kernel, which cannot wait for work queued behind itself).
template <class F>
void PhysicalRun(F&& fn) {
  InstructionsBuilder builder;
  fn(&builder);
  VirtualMachine& vm = VirtualMachine::Get();
  vm.Submit(builder.instructions());
  if (vm.sync_mode() && VirtualMachine::RunningInstruction() == nullptr) {
    for (const InstrRef& i : builder.instructions()) vm.Wait(i.get());
    for (const InstrRef& i : builder.instructions()) vm.ThrowIfFailed(i.get());
  }
}

}  // namespace ofl::vm
