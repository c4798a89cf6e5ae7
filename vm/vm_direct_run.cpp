// Direct runs: a small op call of a built-in kernel on an idle synchronous stream, whose operands
// no unfinished instruction touches, runs on the issuing thread with no instruction at all. The
// rules are in vm/THREADING.md, "Direct runs".
#include <exception>
#include <limits>

#include "vm/log.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

namespace {

// Whether every instruction recorded on the blob is finished: then nothing issued so far can touch
// it while the submit lock is held. `written`: the op writes it, so earlier readers count too.
bool EveryRecordedUseFinished(EagerBlobObject* blob, bool written) {
  const Dependence& dep = blob->dependence();
  if (dep.last_writer && !dep.last_writer->done()) return false;
  if (written) {
    for (const InstrRef& r : dep.readers) {
      if (!r->done()) return false;
    }
  }
  return true;
}

// Set when this thread's direct-run context (in TryRunOpDirect) has been destroyed: see
// compute_context_gone in vm/instruction.cpp. A direct run then takes the instruction path.
thread_local bool direct_context_gone OFL_TLS_INITIAL_EXEC = false;
struct DirectContext {
  kernels::KernelContext ctx;
  ~DirectContext() { direct_context_gone = true; }
};

}  // namespace

bool VirtualMachine::TryRunOpDirect(const std::string& op_name, kernels::KernelFn kernel,
                                    OpCallPolicy::Operands inputs, OpCallPolicy::Operands outputs,
                                    const Attrs& attrs, Stream* stream) {
  if (!stream->complete_at_return() || !kernels::IsBuiltinKernel(kernel) || direct_context_gone) {
    return false;
  }
  if (tracer_.tracing() || closing_.load(std::memory_order_relaxed) ||
      RunningInstruction() != nullptr || LogDebugEnabled()) {
    return false;
  }
  if (devices_.any_device_failed() && devices_.IsFailed(stream->device())) {
    return false;
  }
  const int64_t limit = inline_bytes_.load(std::memory_order_relaxed);
  int64_t bytes = 0;
  for (const OpCallPolicy::Operands& run : {inputs, outputs}) {
    for (size_t i = 0; i < run.size; ++i) {
      if (__builtin_add_overflow(bytes, ViewBytes(run.data[i].shape, run.data[i].dtype), &bytes)) {
        return false;
      }
    }
  }
  if (limit <= 0 || bytes > limit) return false;

  // Held for the whole run: no other instruction can be issued meanwhile, so nothing new can touch
  // the operands, and the ones already issued are finished (EveryRecordedUseFinished). The kernel
  // is the library's own, small, and never calls back into the VM, so the hold is short and cannot
  // deadlock.
  std::lock_guard<SubmitMutex> lock(engine_.mutex());
  // Shutdown takes the submit lock once after setting the flag (and closing_ before it): a run that
  // got the lock after that sees the flag, and one that had it finishes before the pools close.
  if (closing_.load(std::memory_order_relaxed)) return false;
  if (!stream->TryClaimInline()) return false;  // queued work on the stream, or another inline run
  struct EndClaim {
    Stream* stream;
    ~EndClaim() { stream->EndInline(); }
  } end_claim{stream};
  for (size_t i = 0; i < inputs.size; ++i) {
    EagerBlobObject* blob = inputs.data[i].blob.get();
    // EveryRecordedUseFinished first: its acquire makes the finished writer's allocation visible.
    if (blob->error() || !EveryRecordedUseFinished(blob, false) || !blob->allocated()) return false;
  }
  for (size_t i = 0; i < outputs.size; ++i) {
    EagerBlobObject* blob = outputs.data[i].blob.get();
    if (blob->error() || !EveryRecordedUseFinished(blob, true) ||
        !blob->producer_stream()->complete_at_return()) {
      return false;
    }
  }
  // Outputs get memory from a cached block only: a miss (which may fail) takes the general path.
  // Blocks given here stay with their blobs if that path is taken after all.
  for (size_t i = 0; i < outputs.size; ++i) {
    EagerBlobObject* blob = outputs.data[i].blob.get();
    if (!blob->allocated() &&
        !blob->TryAllocateCached(blob->producer_stream()->pool(), op_name.c_str())) {
      return false;
    }
  }
  static thread_local DirectContext tls OFL_TLS_INITIAL_EXEC;
  kernels::KernelContext& ctx = tls.ctx;
  if (ctx.inputs.size() != inputs.size) ctx.inputs.resize(inputs.size);
  if (ctx.outputs.size() != outputs.size) ctx.outputs.resize(outputs.size);
  for (size_t i = 0; i < inputs.size; ++i) inputs.data[i].ResolveInto(&ctx.inputs[i]);
  for (size_t i = 0; i < outputs.size; ++i) outputs.data[i].ResolveInto(&ctx.outputs[i]);
  kernels::SetAttrs(&ctx, attrs);
  ctx.stream = stream->native();
  ctx.device_index = stream->device().index();
  try {
    kernel(ctx);
  } catch (...) {
    // The general path runs it again (it only wrote its outputs) and reports the error the usual
    // way: kept for the next wait, its outputs poisoned.
    return false;
  }
  direct_runs_.store(direct_runs_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return true;
}

}  // namespace ofl::vm
