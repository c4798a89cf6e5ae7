#include "vm/instructions_builder.h"

namespace ofl::vm {

InstrRef InstructionsBuilder::Add(Stream* stream, std::unique_ptr<InstructionPolicy> policy) {
  instructions_.emplace_back(new Instruction(0, stream, std::move(policy)));
  return instructions_.back();
}

InstrRef InstructionsBuilder::OpCall(std::string op_name, kernels::KernelFn kernel,
                                     std::vector<BlobArg> inputs, std::vector<BlobArg> outputs,
                                     std::vector<int64_t> attrs, Stream* stream) {
  if (stream == nullptr) {
    const BlobArg& anchor = outputs.empty() ? inputs.at(0) : outputs[0];
    stream = anchor.blob->producer_stream();
  }
  return Add(stream, std::make_unique<OpCallPolicy>(std::move(op_name), kernel, std::move(inputs),
                                                    std::move(outputs), std::move(attrs)));
}

InstrRef InstructionsBuilder::AccessBlobByCallback(std::string op_name, BlobArg arg,
                                                   AccessBlobByCallbackPolicy::Callback cb,
                                                   AccessModifier modifier, Stream* stream,
                                                   bool caller_memory) {
  if (stream == nullptr) stream = arg.blob->producer_stream();
  return Add(stream,
             std::make_unique<AccessBlobByCallbackPolicy>(std::move(op_name), std::move(arg),
                                                          std::move(cb), modifier, caller_memory));
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
