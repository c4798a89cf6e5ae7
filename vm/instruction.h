// Instruction = policy + operands. The policy says what the instruction does (OpCall,
// AccessBlobByCallback, ReleaseTensor, Barrier) and which blobs it reads and writes; the VM uses
// only that to order instructions, so a new behaviour is a new policy, not a new branch in the VM.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "vm/eager_blob_object.h"
#include "vm/instruction_ref.h"
#include "vm/vm_error.h"

namespace ofl::vm {

class Stream;
class Instruction;

// A strided view of a blob, as an operand of an instruction.
struct BlobArg {
  BlobPtr blob;
  Shape shape;
  kernels::Strides stride;
  int64_t offset = 0;  // in elements
  DType dtype = DType::kFloat32;

  kernels::TensorArg Resolve() const;  // pointer into the (allocated) blob
  // The same into an existing argument (a reused kernel context: no temporary shapes).
  void ResolveInto(kernels::TensorArg* arg) const;
};

// The logical bytes of a view of `shape` (INT64_MAX when that overflows).
inline int64_t ViewBytes(const Shape& shape, DType dtype) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape.numel(), static_cast<int64_t>(element_size(dtype)), &bytes)) {
    return std::numeric_limits<int64_t>::max();
  }
  return bytes;
}

enum class AccessModifier { kConst, kMut };

class InstructionPolicy : public SmallObjectNew {
 public:
  virtual ~InstructionPolicy() = default;
  virtual const char* policy_name() const = 0;
  virtual const std::string& op_name() const = 0;
  const SmallObjectVector<BlobPtr>& reads() const { return reads_; }
  const SmallObjectVector<BlobPtr>& writes() const { return writes_; }
  // Allocates every written blob that has no memory yet, on the instruction's stream.
  virtual void Prepare(Instruction* instr);
  virtual void Compute(Instruction* instr) = 0;
  // Whether the instruction still runs when a blob it touches is poisoned (ReleaseTensor must).
  virtual bool RunsOnPoisonedInputs() const { return false; }
  // Whether a wait that gives up (a hang report) may cancel it while it is still queued. A
  // collective may not: the other ranks would wait for it forever.
  virtual bool Abandonable() const { return true; }
  // Whether it reads or writes memory its caller owns (copy_to_host's destination, from_host's
  // source). A wait that gives up on such an instruction after it started must not return to the
  // caller until it finished, or the caller could free that memory under it.
  virtual bool TouchesCallerMemory() const { return false; }
  // Called once the instruction is complete (its device work finished; at once after Compute on a
  // synchronous stream), on the thread that observed the completion.
  virtual void OnComplete(Instruction* /*instr*/) {}
  // The bytes it reads and writes, when it may run inline on its issuing thread (an idle
  // synchronous stream, inputs complete: see vm/THREADING.md, "Inline runs"); -1 when it must
  // always go to its stream's worker (a callback may block, or touch the caller's memory).
  virtual int64_t InlineBytes() const { return -1; }
  // What a hang report adds about it while it runs ("" for nothing): a collective tells what the
  // collective watchdog found out about the ranks it waits for.
  virtual std::string RunningDetail() const { return {}; }
  // The op call's attributes by name ("dim=1, start=0, length=2"), for traces; empty for none.
  virtual std::string AttrsStr() const { return {}; }

 protected:
  SmallObjectVector<BlobPtr> reads_;
  SmallObjectVector<BlobPtr> writes_;
};

class OpCallPolicy final : public InstructionPolicy {
 public:
  // A run of operands, copied by the constructor.
  struct Operands {
    const BlobArg* data = nullptr;
    size_t size = 0;
  };
  OpCallPolicy(std::string op_name, kernels::KernelFn kernel, Operands inputs, Operands outputs,
               const Attrs& attrs);
  const char* policy_name() const override { return "OpCall"; }
  const std::string& op_name() const override { return op_name_; }
  std::string AttrsStr() const override { return attrs_.str(); }
  void Compute(Instruction* instr) override;
  int64_t InlineBytes() const override { return bytes_; }

 private:
  // An operand as the kernel will see it, less its data pointer (base + byte offset, filled in by
  // Compute once the blob has memory).
  struct Operand {
    kernels::TensorArg arg;
    int64_t byte_offset = 0;
  };
  std::string op_name_;
  kernels::KernelFn kernel_;
  int64_t bytes_ = 0;  // the logical bytes of every operand (saturating)
  // Inputs first, then outputs: one allocation for all of them, in the library's small-object
  // allocator (a KernelContext's std::vectors would cost more allocations on the issuing thread).
  SmallObjectVector<Operand> operands_;
  size_t n_inputs_ = 0;
  Attrs attrs_;
};

// Runs a callback on the stream's worker with the view's bytes; const = read, mut = write.
// `caller_memory`: the callback touches memory the caller owns (see TouchesCallerMemory); such a
// callback must be a bounded copy, never something that can block. `bounded_copy`: the callback
// only copies the view's bytes (and may allocate their destination), so a small one may run inline
// on the issuing thread like a small op call (a callback that can block must leave it false).
class AccessBlobByCallbackPolicy final : public InstructionPolicy {
 public:
  using Callback = std::function<void(const kernels::TensorArg&)>;
  AccessBlobByCallbackPolicy(std::string op_name, BlobArg arg, Callback cb, AccessModifier modifier,
                             bool caller_memory = false, bool bounded_copy = false);
  const char* policy_name() const override { return "AccessBlobByCallback"; }
  const std::string& op_name() const override { return op_name_; }
  void Compute(Instruction* instr) override;
  bool TouchesCallerMemory() const override { return caller_memory_; }
  int64_t InlineBytes() const override { return inline_bytes_; }

 private:
  std::string op_name_;
  BlobArg arg_;
  Callback cb_;
  bool caller_memory_;
  int64_t inline_bytes_ = -1;  // the view's bytes when bounded_copy, else -1
};

// Returns a dead tensor's block to its pool; a write, so it runs after every earlier user. The
// block goes back when the instruction is complete: on an asynchronous device, only then has every
// earlier use (on this stream, and on the streams it waited for on the device) finished.
class ReleaseTensorPolicy final : public InstructionPolicy {
 public:
  explicit ReleaseTensorPolicy(BlobPtr blob);
  const char* policy_name() const override { return "ReleaseTensor"; }
  const std::string& op_name() const override;
  void Prepare(Instruction*) override {}
  void Compute(Instruction*) override {}
  void OnComplete(Instruction* instr) override;
  bool RunsOnPoisonedInputs() const override { return true; }
};

// Touches nothing: done when every earlier instruction on its stream is done.
class BarrierPolicy final : public InstructionPolicy {
 public:
  const char* policy_name() const override { return "Barrier"; }
  const std::string& op_name() const override;
  void Prepare(Instruction*) override {}
  void Compute(Instruction*) override {}
  bool RunsOnPoisonedInputs() const override { return true; }
};

// A test and extension hook: runs an arbitrary function over the given reads/writes.
class FunctionPolicy final : public InstructionPolicy {
 public:
  FunctionPolicy(std::string op_name, std::vector<BlobPtr> reads, std::vector<BlobPtr> writes,
                 std::function<void()> fn);
  const char* policy_name() const override { return "Function"; }
  const std::string& op_name() const override { return op_name_; }
  void Compute(Instruction*) override { fn_(); }

 private:
  std::string op_name_;
  std::function<void()> fn_;
};

// What tracing records about one instruction (filled in only while tracing is on).
struct AllocRecord {
  uint64_t blob_id = 0;
  size_t bytes = 0;
  bool cache_hit = false;
};

class Instruction : public SmallObjectNew {
 public:
  // The id is assigned when the VM accepts the instruction (ids follow issue order).
  Instruction(uint64_t id, Stream* stream, std::unique_ptr<InstructionPolicy> policy);
  ~Instruction();  // returns its completion event to its stream

  uint64_t id() const { return id_; }
  Stream* stream() const { return stream_; }
  InstructionPolicy* policy() const { return policy_.get(); }
  // Complete: its work finished (on an asynchronous device, its completion event completed).
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Launched: its worker returned from it (set together with done on a synchronous stream).
  bool launched() const { return launched_.load(std::memory_order_acquire); }
  const VmErrorPtr& error() const { return error_; }
  // The completion event its stream recorded after it (an asynchronous stream; null otherwise).
  // Written by the launching worker before launched() is published; read after it.
  NativeEvent event() const { return event_; }
  // Drops what the instruction no longer needs once done: its predecessors, and hands back its
  // policy (which holds its blobs) for the caller to destroy.
  std::unique_ptr<InstructionPolicy> ReleaseOperands();

  // Set at submit (under the VM's lock).
  SmallObjectVector<InstrRef> wait_for;  // unfinished predecessors on other streams
  std::vector<uint64_t> dep_ids;         // every predecessor, for the trace (only while tracing)
  std::vector<bool> dep_cross_stream;    // parallel to dep_ids
  std::vector<InstrRef> trace_preds;     // every predecessor (only while tracing)
  SmallObjectVector<uint64_t> folded_releases;  // blobs freed after it ran (only while tracing)
  int64_t issue_ns = 0;
  int issue_thread = 0;  // TraceThreadIndex() of the issuing thread (only while tracing)
  // Set by the worker.
  int64_t ready_ns = 0, start_ns = 0, end_ns = 0;  // end: launched
  int64_t complete_ns = 0;                         // when its completion was observed
  std::vector<AllocRecord> allocs;
  bool trace = false;

 private:
  friend class Stream;
  friend class VirtualMachine;
  friend class VmEngine;
  friend std::atomic<int32_t>& RefCountOf(Instruction*);
  uint64_t id_;
  Stream* stream_;
  std::unique_ptr<InstructionPolicy> policy_;
  std::atomic<int32_t> refs_{0};  // touched by the issuing side only
  // What the worker writes sits on cache lines of its own, away from the reference count and the
  // operand lists that the issuing thread keeps writing.
  char worker_side_[64] = {};
  bool computed_ = false;  // Prepare and Compute ran without error (worker only)
  std::atomic<bool> launched_{false};
  std::atomic<bool> done_{false};
  // The event recorded after it on an asynchronous stream (null on a synchronous one).
  NativeEvent event_ = nullptr;
  // Who got there first: the worker about to run it (kQueued -> kStarted, after its cross-stream
  // predecessors finished) or a waiter that gave up on it with a hang report (kQueued ->
  // kAbandoned; the worker then skips it and poisons its writes). One compare-and-swap on each
  // side, so the waiter knows for certain whether the instruction will run.
  enum RunState : uint8_t { kQueued, kStarted, kAbandoned };
  std::atomic<uint8_t> run_state_{kQueued};
  // Dead blobs whose last user is this instruction: freed once it is complete (right after it ran
  // on a synchronous stream). The list is closed (kReleasesClosed) before done is published, so a
  // late push fails and the releaser frees the blob itself (then every user is complete).
  std::atomic<EagerBlobObject*> releases_{nullptr};
  VmErrorPtr error_;
};

}  // namespace ofl::vm
