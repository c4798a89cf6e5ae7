#include "vm/instruction.h"

#include <limits>

#include "oneflow_lite/error.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

void DestroyInstruction(Instruction* instr) { delete instr; }
std::atomic<int32_t>& RefCountOf(Instruction* instr) { return instr->refs_; }

namespace {
// A view's offset is in bounds whenever the view has elements; an empty view of an empty tensor
// may carry a meaningless huge offset (its strides saturated), which must not overflow here.
int64_t ByteOffset(int64_t offset, DType dtype) {
  return static_cast<int64_t>(static_cast<uint64_t>(offset) *
                              static_cast<uint64_t>(element_size(dtype)));
}
}  // namespace

kernels::TensorArg BlobArg::Resolve() const {
  kernels::TensorArg arg;
  ResolveInto(&arg);
  return arg;
}

void BlobArg::ResolveInto(kernels::TensorArg* arg) const {
  char* base = blob->data();
  arg->data = base ? base + ByteOffset(offset, dtype) : nullptr;
  arg->shape = shape;
  arg->stride = stride;
  arg->dtype = dtype;
}

void InstructionPolicy::Prepare(Instruction* instr) {
  for (const BlobPtr& blob : writes_) {
    if (blob->allocated()) continue;
    bool hit = false;
    // The blob's own device's pool: a copy between devices runs on one device's stream and writes
    // a blob of the other.
    CachingAllocator* pool = blob->producer_stream()->pool();
    try {
      blob->Allocate(pool, &hit, op_name().c_str());
    } catch (const OutOfMemory&) {
      Stream* home = blob->producer_stream();
      if (home->completion().complete_at_return()) throw;
      // Blocks of dead tensors return to the pool only when their last users complete: wait for
      // the device's launched work, then try once more (the pool empties its cache again).
      VirtualMachine::Get().DrainDevice(home->device());
      blob->Allocate(pool, &hit, op_name().c_str());
    }
    if (instr->trace) instr->allocs.push_back({blob->id(), blob->bytes(), hit});
  }
}

OpCallPolicy::OpCallPolicy(std::string op_name, kernels::KernelFn kernel, Operands inputs,
                           Operands outputs, const Attrs& attrs)
    : op_name_(std::move(op_name)), kernel_(kernel), n_inputs_(inputs.size), attrs_(attrs) {
  operands_.reserve(inputs.size + outputs.size);
  reads_.reserve(inputs.size);
  writes_.reserve(outputs.size);
  auto take = [&](const BlobArg& a, SmallObjectVector<BlobPtr>* blobs) {
    operands_.push_back(Operand{kernels::TensorArg{nullptr, a.shape, a.stride, a.dtype},
                                ByteOffset(a.offset, a.dtype)});
    blobs->push_back(a.blob);
    if (__builtin_add_overflow(bytes_, ViewBytes(a.shape, a.dtype), &bytes_)) {
      bytes_ = std::numeric_limits<int64_t>::max();
    }
  };
  for (size_t i = 0; i < inputs.size; ++i) take(inputs.data[i], &reads_);
  for (size_t i = 0; i < outputs.size; ++i) take(outputs.data[i], &writes_);
}

namespace {
// Set when this thread's kernel context (below) has been destroyed. A thread's thread_locals die
// before it is gone, and the main thread's die in exit() before the exit hooks and the static
// destructors, which may still issue ops: an inline run there must not use the dead context.
// Trivially destructible, so it stays readable for as long as the thread runs.
thread_local bool compute_context_gone OFL_TLS_INITIAL_EXEC = false;
struct ComputeContext {
  kernels::KernelContext ctx;
  ~ComputeContext() { compute_context_gone = true; }
};
}  // namespace

void OpCallPolicy::Compute(Instruction* instr) {
  auto run = [&](kernels::KernelContext& ctx) {
    const size_t n_in = n_inputs_;
    const size_t n_out = operands_.size() - n_in;
    ctx.inputs.resize(n_in);
    ctx.outputs.resize(n_out);
    for (size_t i = 0; i < n_in; ++i) {
      const Operand& op = operands_[i];
      kernels::TensorArg& a = ctx.inputs[i];
      a = op.arg;
      char* base = reads_[i]->data();
      a.data = base ? base + op.byte_offset : nullptr;
    }
    for (size_t i = 0; i < n_out; ++i) {
      const Operand& op = operands_[n_in + i];
      kernels::TensorArg& a = ctx.outputs[i];
      a = op.arg;
      char* base = writes_[i]->data();
      a.data = base ? base + op.byte_offset : nullptr;
    }
    kernels::SetAttrs(&ctx, attrs_);
    ctx.stream = instr->stream()->native();
    ctx.device_index = instr->stream()->device().index();
    kernel_(ctx);
  };
  if (__builtin_expect(compute_context_gone, 0)) {
    kernels::KernelContext ctx;  // the thread is exiting: a context of this call's own
    run(ctx);
    return;
  }
  // The worker fills a context of its own instead of writing into the policy: the issuing thread
  // frees the policy later, and lines the worker dirtied would have to travel back to its core.
  static thread_local ComputeContext tls OFL_TLS_INITIAL_EXEC;
  run(tls.ctx);
}

AccessBlobByCallbackPolicy::AccessBlobByCallbackPolicy(std::string op_name, BlobArg arg,
                                                       Callback cb, AccessModifier modifier,
                                                       bool caller_memory, bool bounded_copy)
    : op_name_(std::move(op_name)),
      arg_(std::move(arg)),
      cb_(std::move(cb)),
      caller_memory_(caller_memory) {
  if (bounded_copy) inline_bytes_ = ViewBytes(arg_.shape, arg_.dtype);
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

void ReleaseTensorPolicy::OnComplete(Instruction*) { writes_[0]->Free(); }

const std::string& BarrierPolicy::op_name() const {
  static const std::string name = "barrier";
  return name;
}

FunctionPolicy::FunctionPolicy(std::string op_name, std::vector<BlobPtr> reads,
                               std::vector<BlobPtr> writes, std::function<void()> fn)
    : op_name_(std::move(op_name)), fn_(std::move(fn)) {
  reads_.assign(reads.begin(), reads.end());
  writes_.assign(writes.begin(), writes.end());
}

Instruction::Instruction(uint64_t id, Stream* stream, std::unique_ptr<InstructionPolicy> policy)
    : id_(id), stream_(stream), policy_(std::move(policy)) {}

Instruction::~Instruction() {
  if (event_ != nullptr) stream_->RecycleEvent(event_);
}

std::unique_ptr<InstructionPolicy> Instruction::ReleaseOperands() {
  wait_for.clear();
  trace_preds.clear();
  return std::move(policy_);
}

}  // namespace ofl::vm
