#include "vm/virtual_machine.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <thread>
#include <utility>

#include "kernels/device_backend.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/settings.h"
#include "vm/chrome_trace.h"
#include "vm/instructions_builder.h"
#include "vm/log.h"
#include "vm/spin.h"
#include "vm/vm_config.h"

namespace ofl::vm {

namespace {
// The instruction this thread runs as a stream worker (see RunningInstruction).
thread_local Instruction* running_instruction OFL_TLS_INITIAL_EXEC = nullptr;
// Blobs kept alive for the rest of the process: ones that must not be freed (a forked child, a
// thread issuing while the process exits). A lock-free list, so that keeping one takes no lock a
// fork may have left held, and reachable from here, so that leak checkers do not report them.
struct KeptBlob {
  BlobPtr blob;
  KeptBlob* next;
};
std::atomic<KeptBlob*> kept_blobs{nullptr};
void KeepForever(BlobPtr blob) noexcept {
  auto* node = new (std::nothrow) KeptBlob{std::move(blob), nullptr};
  if (node == nullptr) {  // no memory for the node: keep the reference without a place for it
    alignas(BlobPtr) unsigned char slot[sizeof(BlobPtr)];
    new (slot) BlobPtr(std::move(blob));  // never destroyed
    return;
  }
  node->next = kept_blobs.load(std::memory_order_relaxed);
  while (!kept_blobs.compare_exchange_weak(node->next, node, std::memory_order_release,
                                           std::memory_order_relaxed)) {
  }
}
}  // namespace

Instruction* VirtualMachine::RunningInstruction() { return running_instruction; }

VirtualMachine& VirtualMachine::Get() {
  static VirtualMachine* vm = [] {
    auto* v = new VirtualMachine();
    std::atexit(&VirtualMachine::AtExit);
    RegisterForkHandler(v);
    return v;
  }();
  return *vm;
}

VirtualMachine::VirtualMachine()
    : devices_(DeviceRegistry::Hooks{
          &closing_,
          [this](const std::string& what) { OnClosing(what, /*throw_if_shut_down=*/true); },
          [this](const Device& device, StreamRole role, CachingAllocator* pool,
                 DeviceBackend* backend) {
            return std::make_unique<Stream>(this, device, role, pool, backend);
          },
          [this](const std::string& device, const PoolEvent& event) {
            tracer_.OnPoolEvent(device, event);
          }}) {
  std::vector<std::string> warnings;
  const VmConfig config = ReadVmConfig(settings::Environment, &warnings);
  for (const std::string& w : warnings) Logger().warn("{}", w);
  sync_mode_ = config.sync_mode;
  spin_ns_ = config.spin_us * 1000;
  SetWaterMarks(config.high_water, config.low_water);
  SetWaitTimeout(config.wait_timeout_s);
  tracer_.set_trace_path(config.trace_path);
  if (config.trace_vm || !tracer_.trace_path().empty()) {
    // No pool exists yet; each one gets its observer when it is created.
    tracer_.StartClock();
    devices_.ObservePools(true);
    tracer_.set_tracing(true);
  }
  fold_releases_ = config.fold_releases;
  inline_bytes_ = config.inline_bytes;
  exit_stall_ns_ = config.exit_stall_ms * 1000000;
  Logger();  // reads OFL_LOG_LEVEL once, before any worker logs
}

void VirtualMachine::SetWaterMarks(int64_t high, int64_t low) {
  BackPressure::CheckMarks(high, low);
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    pressure_.SetMarks(high, low);
  }
  done_cv_.notify_all();  // a blocked submitter re-checks against the new marks
}

void VirtualMachine::Release(BlobPtr blob) noexcept {
  if (__builtin_expect(closing_.load(std::memory_order_relaxed), 0)) {
    // A forked child (the pool's lock may have been held by a thread the fork did not copy), or a
    // thread other than the exiting one while the process exits (the device may still be using
    // the block): the blob is kept, never freed. After a shutdown it frees into its closed pool
    // when it dies, a no-op.
    if (forked_.load() || ParksWhileExiting()) {
      KeepForever(std::move(blob));
      return;
    }
    if (shut_down_.load()) return;
  }
  const uint64_t blob_id = blob->id();
  try {
    if (!blob->issued() && (fold_releases_ || sync_mode_)) {
      // No instruction ever recorded it (its memory came at issue, or from a direct run): nothing
      // can be using it, so the block goes back now, as when every user finished (below).
      blob->Free();
      return;
    }
    // OFL_VM_FOLD_RELEASE=0 issues a ReleaseTensor for every blob, to see each one in traces.
    // In OFL_VM_SYNC=1 mode every user has finished (unless another thread's work is blocked).
    switch (engine_.PlanRelease(blob, /*fold=*/fold_releases_ && !sync_mode_,
                                /*free_when_done=*/fold_releases_ || sync_mode_)) {
      case VmEngine::ReleasePlan::kFreeNow:
        blob->Free();  // every user has finished
        return;
      case VmEngine::ReleasePlan::kFolded:
        return;
      case VmEngine::ReleasePlan::kIssue:
        break;
    }
    // Neither back-pressure nor the OFL_VM_SYNC=1 wait: a destructor must not block or throw.
    InstructionsBuilder builder;
    builder.ReleaseTensor(std::move(blob));
    Submit(builder.instructions(), /*back_pressure=*/false);
  } catch (const std::exception& e) {
    auto err = std::make_shared<VmError>();
    err->op_name = "release_tensor";
    err->message = "release_tensor: returning the block of blob #" + std::to_string(blob_id) +
                   " to its pool failed: " + e.what();
    errors_.Record(err);
    Logger().error("{}", err->message);
  }
}

void VirtualMachine::Submit(SmallObjectVector<InstrRef>& batch, bool back_pressure) {
  if (batch.empty()) return;  // a batch whose op calls all ran directly (TryRunOpDirect)
  if (__builtin_expect(closing_.load(std::memory_order_relaxed), 0)) {
    OnClosing(batch.front()->policy()->op_name(), /*throw_if_shut_down=*/false);
  }
  if (shut_down_.load(std::memory_order_relaxed)) {
    for (InstrRef& ref : batch) {
      auto err = std::make_shared<VmError>();
      err->kind = ErrorKind::kGeneric;
      err->op_name = ref->policy()->op_name();
      err->instruction_id = ref->id();
      err->message = err->op_name + " (instruction #" + std::to_string(ref->id()) +
                     ") was not run: the runtime was shut down (ofl::shutdown or process exit)";
      ref->error_ = err;
      ref->done_.store(true, std::memory_order_seq_cst);
    }
    return;
  }
  if (back_pressure) WaitForCapacity();
  VmEngine::IssueContext ctx;
  ctx.tracing = tracer_.tracing();
  ctx.issue_thread = ctx.tracing ? TraceThreadIndex() : 0;
  ctx.log_debug = LogDebugEnabled();
  ctx.on_worker = RunningInstruction() != nullptr;
  ctx.inline_limit = inline_bytes_.load(std::memory_order_relaxed);
  InlineRuns run_here;
  Graveyard graveyard;
  engine_.IssueAndDispatch(batch, ctx, &run_here, &graveyard);
  // The batch holds a reference to each, so none is destroyed by another thread's reap meanwhile.
  for (size_t i = 0; i < run_here.size(); ++i) {
    Instruction* instr = run_here[i];
    Stream* stream = instr->stream();
    Run(instr);
    stream->EndInline();
  }
}

bool VirtualMachine::AllocateAtIssue(EagerBlobObject* blob, const char* owner) {
  Stream* stream = blob->producer_stream();
  if (!stream->complete_at_return() || tracer_.tracing() ||
      closing_.load(std::memory_order_relaxed)) {
    return false;
  }
  return blob->TryAllocateCached(stream->pool(), owner);
}

void VirtualMachine::Run(Instruction* instr) {
  WaitForPredecessors(instr);
  running_instruction = instr;
  if (instr->trace) BeginTrace(instr);
  const bool log_debug = LogDebugEnabled();
  if (log_debug) {
    Logger().debug("[#{} {}] start {} {}", instr->id(), instr->stream()->name(),
                   instr->policy()->policy_name(), instr->policy()->op_name());
  }
  const VmErrorPtr poison = PoisonOf(instr);
  if (poison) {
    SkipPoisoned(instr, poison, log_debug);
  } else {
    Execute(instr);
  }
  if (instr->trace) EndTrace(instr);
  FinishRun(instr, log_debug);
}

void VirtualMachine::WaitForPredecessors(Instruction* instr) {
  const CompletionPolicy& completion = instr->stream()->completion();
  for (const InstrRef& pred : instr->wait_for) completion.OrderAfter(*this, instr, pred.get());
}

void VirtualMachine::BeginTrace(Instruction* instr) {
  int64_t ready = instr->issue_ns;
  for (const InstrRef& p : instr->trace_preds) ready = std::max(ready, p->end_ns);
  instr->ready_ns = ready;
  instr->start_ns = std::max(ready, NowNs());
  VmTracer::SetCurrentTracedInstruction(instr->id());
}

VmErrorPtr VirtualMachine::PoisonOf(Instruction* instr) {
  InstructionPolicy* policy = instr->policy();
  VmErrorPtr poison;
  // Races with the compare-and-swap of a waiter that gives up (AbandonAndReport, or an interrupted
  // wait for a copy of the caller's memory): exactly one of the two wins.
  uint8_t queued = Instruction::kQueued;
  if (!instr->run_state_.compare_exchange_strong(queued, Instruction::kStarted,
                                                 std::memory_order_seq_cst)) {
    auto err = std::make_shared<VmError>();
    err->op_name = policy->op_name();
    err->instruction_id = instr->id();
    err->message = policy->op_name() + " (instruction #" + std::to_string(instr->id()) + ", " +
                   policy->policy_name() + " on " + instr->stream()->name() +
                   ") was not run: a wait for it gave up (a hang report, or an interrupted wait)";
    err->reported.store(true);  // its waiter got the hang report (or the interruption) instead
    Logger().warn("[#{} {}] {}", instr->id(), instr->stream()->name(), err->message);
    poison = std::move(err);  // skipped like an instruction with a poisoned input
  } else if (devices_.any_device_failed() && !policy->RunsOnPoisonedInputs() &&
             devices_.IsFailed(instr->stream()->device())) {
    poison = FailInstruction(instr, ErrorKind::kDevice, "its device failed earlier");
  } else if (!policy->RunsOnPoisonedInputs()) {
    for (const BlobPtr& b : policy->reads()) {
      if (b->error()) poison = b->error();
    }
    for (const BlobPtr& b : policy->writes()) {
      if (!poison && b->error()) poison = b->error();
    }
  }
  return poison;
}

void VirtualMachine::SkipPoisoned(Instruction* instr, const VmErrorPtr& poison, bool log_debug) {
  InstructionPolicy* policy = instr->policy();
  instr->error_ = poison;
  for (const BlobPtr& b : policy->writes()) b->set_error(poison);
  if (log_debug) {
    Logger().debug("[#{} {}] skipped {}: an input is poisoned by #{} {}", instr->id(),
                   instr->stream()->name(), policy->op_name(), poison->instruction_id,
                   poison->op_name);
  }
}

void VirtualMachine::Execute(Instruction* instr) {
  InstructionPolicy* policy = instr->policy();
  ErrorKind kind = ErrorKind::kGeneric;
  std::string what;
  bool failed = true;
  try {
    policy->Prepare(instr);
    policy->Compute(instr);
    instr->computed_ = true;
    failed = false;
  } catch (const std::exception& e) {
    kind = ClassifyError(instr, e, &what);
  } catch (...) {
    what = "unknown exception";
  }
  if (failed) FailInstruction(instr, kind, what);
}

ErrorKind VirtualMachine::ClassifyError(Instruction* instr, const std::exception& e,
                                        std::string* what) {
  const ErrorKind kind = ErrorKindOf(e);
  *what = e.what();
  // A fault the device cannot recover from: marked before the error is visible (see
  // FailLaunched).
  if (dynamic_cast<const DeviceFailed*>(&e) != nullptr) {
    devices_.MarkDeviceFailed(instr->stream()->device(), *what);
  }
  return kind;
}

void VirtualMachine::EndTrace(Instruction* instr) {
  instr->end_ns = std::max(instr->start_ns, NowNs());
  VmTracer::SetCurrentTracedInstruction(0);
}

void VirtualMachine::FinishRun(Instruction* instr, bool log_debug) {
  Stream* self = instr->stream();
  InstructionPolicy* policy = instr->policy();
  if (log_debug) {
    Logger().debug("[#{} {}] {} {} {}", instr->id(), self->name(), self->completion().returned(),
                   policy->policy_name(), policy->op_name());
  }
  running_instruction = nullptr;
  self->completion().AfterRun(*this, instr);
}

void VirtualMachine::PublishLaunched(Instruction* instr) {
  instr->launched_.store(true, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(done_mu_);
    done_cv_.notify_all();
  }
}

void VirtualMachine::ReleaseBlocks(Instruction* instr) {
  // Free the blobs whose last user this was; closing the list makes later pushes fail.
  EagerBlobObject* dead = instr->releases_.exchange(kReleasesClosed, std::memory_order_acq_rel);
  if (dead == kReleasesClosed) return;  // released already (a broken-rule test)
  while (dead != nullptr) {
    EagerBlobObject* next = dead->next_release;
    dead->Free();
    dead = next;
  }
  if (instr->computed_) instr->policy()->OnComplete(instr);
}

void VirtualMachine::Finish(Instruction* instr) {
  // Launched before it finished: only an instruction of an asynchronous stream is
  // (PublishLaunched).
  if (instr->launched_.load(std::memory_order_relaxed) && !instr->error_ &&
      !instr->policy()->RunsOnPoisonedInputs()) {
    // A predecessor on the same device failed after this was launched behind it on the device:
    // what it read is not valid, so it fails with the same error.
    for (const BlobPtr& b : instr->policy()->reads()) {
      if (b->error()) {
        instr->error_ = b->error();
        for (const BlobPtr& w : instr->policy()->writes()) w->set_error(b->error());
        break;
      }
    }
  }
  ReleaseBlocks(instr);
  if (instr->trace) instr->complete_ns = std::max(instr->end_ns, NowNs());
  instr->launched_.store(true, std::memory_order_release);
  Complete(instr);
}

VmErrorPtr VirtualMachine::FailInstruction(Instruction* instr, ErrorKind kind,
                                           const std::string& what) {
  InstructionPolicy* policy = instr->policy();
  auto err = std::make_shared<VmError>();
  err->kind = kind;
  err->op_name = policy->op_name();
  err->instruction_id = instr->id();
  err->message = policy->op_name() + " (instruction #" + std::to_string(instr->id()) + ", " +
                 policy->policy_name() + " on " + instr->stream()->name() + ") failed: " + what;
  instr->error_ = err;
  for (const BlobPtr& b : policy->writes()) b->set_error(err);
  errors_.Record(err);
  Logger().error("[#{} {}] {}", instr->id(), instr->stream()->name(), err->message);
  return err;
}

void VirtualMachine::FailLaunched(Instruction* instr, const std::string& what, bool device_failed) {
  // The device is marked failed before the error is visible anywhere: a reader on another stream
  // that sees the poisoned blob (and wakes the host) must find the device failed already, so the
  // next op on it throws at the call.
  if (device_failed) devices_.MarkDeviceFailed(instr->stream()->device(), what);
  FailInstruction(instr, ErrorKind::kDevice, what);
  PublishLaunched(instr);
  Finish(instr);
}

void VirtualMachine::Complete(Instruction* instr) {
  pressure_.CountCompleted();
  // After this store the instruction belongs to the issuing side; the worker must not touch it.
  instr->done_.store(true, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(done_mu_);
    done_cv_.notify_all();
  }
}

}  // namespace ofl::vm
