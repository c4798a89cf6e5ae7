#include "vm/instructions_builder.h"

#include "oneflow_lite/error.h"

namespace ofl::vm {

InstrRef InstructionsBuilder::Add(Stream* stream, std::unique_ptr<InstructionPolicy> policy) {
  instructions_.emplace_back(new Instruction(0, stream, std::move(policy)));
  return instructions_.back();
}

InstrRef InstructionsBuilder::OpCall(std::string op_name, kernels::KernelFn kernel,
                                     std::vector<BlobArg> inputs, std::vector<BlobArg> outputs,
                                     const Attrs& attrs, Stream* stream) {
  return OpCall(std::move(op_name), kernel, OpCallPolicy::Operands{inputs.data(), inputs.size()},
                OpCallPolicy::Operands{outputs.data(), outputs.size()}, attrs, stream);
}

InstrRef InstructionsBuilder::OpCall(std::string op_name, kernels::KernelFn kernel,
                                     std::initializer_list<BlobArg> inputs,
                                     std::initializer_list<BlobArg> outputs, const Attrs& attrs,
                                     Stream* stream) {
  return OpCall(std::move(op_name), kernel, OpCallPolicy::Operands{inputs.begin(), inputs.size()},
                OpCallPolicy::Operands{outputs.begin(), outputs.size()}, attrs, stream);
}

namespace {
thread_local const char* t_op_name_scope = nullptr;
thread_local const char* t_composed_op_name = nullptr;
}  // namespace

OpNameScope::OpNameScope(const char* scope) : prev_(t_op_name_scope) { t_op_name_scope = scope; }
OpNameScope::~OpNameScope() { t_op_name_scope = prev_; }

ComposedOpName::ComposedOpName(const char* name) : prev_(t_composed_op_name) {
  if (t_composed_op_name == nullptr) t_composed_op_name = name;
}
ComposedOpName::~ComposedOpName() { t_composed_op_name = prev_; }

InstrRef InstructionsBuilder::OpCall(std::string op_name, kernels::KernelFn kernel,
                                     OpCallPolicy::Operands inputs, OpCallPolicy::Operands outputs,
                                     const Attrs& attrs, Stream* stream) {
  if (t_composed_op_name != nullptr) op_name = t_composed_op_name;
  if (t_op_name_scope != nullptr) op_name = std::string(t_op_name_scope) + "." + op_name;
  if (stream == nullptr) {
    if (outputs.size == 0 && inputs.size == 0) {
      throw InvalidArgument(op_name + ": an op call needs an operand to pick its stream");
    }
    const BlobArg& anchor = outputs.size == 0 ? inputs.data[0] : outputs.data[0];
    stream = anchor.blob->producer_stream();
  }
  // Only as the batch's first instruction: one run here must not overtake instructions built
  // before it and not yet submitted. A direct run leaves no instruction: the null reference.
  if (instructions_.empty() &&
      VirtualMachine::Get().TryRunOpDirect(op_name, kernel, inputs, outputs, attrs, stream)) {
    return InstrRef();
  }
  return Add(stream,
             std::make_unique<OpCallPolicy>(std::move(op_name), kernel, inputs, outputs, attrs));
}

InstrRef InstructionsBuilder::AccessBlobByCallback(std::string op_name, BlobArg arg,
                                                   AccessBlobByCallbackPolicy::Callback cb,
                                                   AccessModifier modifier, Stream* stream,
                                                   bool caller_memory, bool bounded_copy) {
  if (stream == nullptr) stream = arg.blob->producer_stream();
  return Add(stream, std::make_unique<AccessBlobByCallbackPolicy>(
                         std::move(op_name), std::move(arg), std::move(cb), modifier, caller_memory,
                         bounded_copy));
}

InstrRef InstructionsBuilder::ReleaseTensor(BlobPtr blob) {
  Stream* stream = blob->producer_stream();
  return Add(stream, std::make_unique<ReleaseTensorPolicy>(std::move(blob)));
}

InstrRef InstructionsBuilder::Barrier(Stream* stream) {
  return Add(stream, std::make_unique<BarrierPolicy>());
}

InstrRef InstructionsBuilder::Function(std::string op_name, std::vector<BlobPtr> reads,
                                       std::vector<BlobPtr> writes, std::function<void()> fn,
                                       Stream* stream) {
  return Add(stream, std::make_unique<FunctionPolicy>(std::move(op_name), std::move(reads),
                                                      std::move(writes), std::move(fn)));
}

}  // namespace ofl::vm
