// Direct reads: reading a small tensor back to the host (to_vector, copy_to_host) whose producer
// finished, on a synchronous host-accessible device, copies it on the calling thread with no
// instruction; Tensor::data_ptr skips its wait the same way when the writers are complete. The
// rules are in vm/THREADING.md, "Direct reads".
#include "vm/log.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

bool VirtualMachine::TryReadDirect(const BlobArg& arg, DirectReadFn read, void* context) {
  EagerBlobObject* blob = arg.blob.get();
  Stream* producer = blob->producer_stream();
  if (producer == nullptr || !producer->complete_at_return() ||
      !producer->backend()->host_accessible()) {
    return false;
  }
  if (tracer_.tracing() || closing_.load(std::memory_order_relaxed) ||
      RunningInstruction() != nullptr || LogDebugEnabled()) {
    return false;
  }
  const int64_t limit = inline_bytes_.load(std::memory_order_relaxed);
  if (limit <= 0 || ViewBytes(arg.shape, arg.dtype) > limit) return false;
  // Held for the copy: nothing can be issued meanwhile, so no instruction can start writing the
  // blob (or free it) while it is read, and its dependences can be read.
  std::lock_guard<SubmitMutex> lock(engine_.mutex());
  // closing_ (exit, shutdown, a fork child) sends the read the instruction way, which reports it.
  if (closing_.load(std::memory_order_relaxed)) return false;
  const Dependence& dep = blob->dependence();
  // done()'s acquire makes the finished writer's data (and its allocation) visible here.
  if (dep.last_writer && !dep.last_writer->done()) return false;
  if (blob->error() || !blob->allocated()) return false;  // the general path reports the error
  // A local, not a thread_local: a read from a static destructor at exit must not find its
  // thread's objects destroyed.
  const kernels::TensorArg src = arg.Resolve();
  read(src, context);
  direct_reads_.store(direct_reads_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return true;
}

bool VirtualMachine::WritesFinished(EagerBlobObject* blob) {
  if (closing_.load(std::memory_order_relaxed) || RunningInstruction() != nullptr) return false;
  std::lock_guard<SubmitMutex> lock(engine_.mutex());
  if (closing_.load(std::memory_order_relaxed)) return false;
  // done() is set at completion (on an asynchronous device, after its event), and its acquire
  // makes the writer's data and the blob's allocation visible here. A reaped writer was finished.
  const Dependence& dep = blob->dependence();
  if (dep.last_writer && !dep.last_writer->done()) return false;
  return !blob->error() && blob->allocated();
}

Stream* VirtualMachine::UnfinishedWriterStream(EagerBlobObject* blob) {
  std::lock_guard<SubmitMutex> lock(engine_.mutex());
  const Dependence& dep = blob->dependence();
  if (!dep.last_writer || dep.last_writer->done()) return nullptr;
  return dep.last_writer->stream();
}

}  // namespace ofl::vm
