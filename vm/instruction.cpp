#include "vm/instruction.h"

#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

void DestroyInstruction(Instruction* instr) { delete instr; }
std::atomic<int32_t>& RefCountOf(Instruction* instr) { return instr->refs_; }

kernels::TensorArg BlobArg::Resolve() const {
  kernels::TensorArg arg;
  char* base = blob->data();
  arg.data = base ? base + offset * static_cast<int64_t>(element_size(dtype)) : nullptr;
  arg.shape = shape;
  arg.stride = stride;
  arg.dtype = dtype;
  return arg;
}

void InstructionPolicy::Prepare(Instruction* instr) {
  for (const BlobPtr& blob : writes_) {
    if (blob->allocated()) continue;
    bool hit = false;
    blob->Allocate(instr->stream()->pool(), &hit, op_name().c_str());
    if (instr->trace) instr->allocs.push_back({blob->id(), blob->bytes(), hit});
  }
}

OpCallPolicy::OpCallPolicy(std::string op_name, kernels::KernelFn kernel,
                           std::vector<BlobArg> inputs, std::vector<BlobArg> outputs,
                           std::vector<int64_t> attrs)
    : op_name_(std::move(op_name)),
      kernel_(kernel),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)) {
  reads_.reserve(inputs_.size());
  for (const BlobArg& a : inputs_) reads_.push_back(a.blob);
  writes_.reserve(outputs_.size());
  for (const BlobArg& a : outputs_) writes_.push_back(a.blob);
  ctx_.attrs = std::move(attrs);
  ctx_.inputs.resize(inputs_.size());
  ctx_.outputs.resize(outputs_.size());
}

void OpCallPolicy::Compute(Instruction*) {
  for (size_t i = 0; i < inputs_.size(); ++i) ctx_.inputs[i] = inputs_[i].Resolve();
  for (size_t i = 0; i < outputs_.size(); ++i) ctx_.outputs[i] = outputs_[i].Resolve();
  kernel_(ctx_);
}

AccessBlobByCallbackPolicy::AccessBlobByCallbackPolicy(std::string op_name, BlobArg arg,
                                                       Callback cb, AccessModifier modifier)
    : op_name_(std::move(op_name)), arg_(std::move(arg)), cb_(std::move(cb)) {
  if (modifier == AccessModifier::kMut) {
    writes_.push_back(arg_.blob);
  } else {
    reads_.push_back(arg_.blob);
  }
}

void AccessBlobByCallbackPolicy::Compute(Instruction*) { cb_(arg_.Resolve()); }

ReleaseTensorPolicy::ReleaseTensorPolicy(BlobPtr blob) { writes_.push_back(std::move(blob)); }

const std::string& ReleaseTensorPolicy::op_name() const {
  static const std::string name = "release_tensor";
  return name;
}

void ReleaseTensorPolicy::Compute(Instruction*) { writes_[0]->Free(); }

const std::string& BarrierPolicy::op_name() const {
  static const std::string name = "barrier";
  return name;
}

FunctionPolicy::FunctionPolicy(std::string op_name, std::vector<BlobPtr> reads,
                               std::vector<BlobPtr> writes, std::function<void()> fn)
    : op_name_(std::move(op_name)), fn_(std::move(fn)) {
  reads_ = std::move(reads);
  writes_ = std::move(writes);
}

Instruction::Instruction(uint64_t id, Stream* stream, std::unique_ptr<InstructionPolicy> policy)
    : id_(id), stream_(stream), policy_(std::move(policy)) {}

void Instruction::ReleaseOperands() {
  wait_for.clear();
  trace_preds.clear();
  policy_.reset();
}

}  // namespace ofl::vm
