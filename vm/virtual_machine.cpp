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

void VirtualMachine::Connect(Instruction* instr, const InstrRef& pred) {
  if (!pred || pred.get() == instr) return;
  const bool cross = pred->stream() != instr->stream();
  if (instr->trace) {
    if (std::find(instr->dep_ids.begin(), instr->dep_ids.end(), pred->id()) ==
        instr->dep_ids.end()) {
      instr->dep_ids.push_back(pred->id());
      instr->dep_cross_stream.push_back(cross);
      instr->trace_preds.push_back(pred);
    }
  }
  // Same stream: the queue's order already serialises them. Finished: nothing to wait for.
  if (!cross || pred->done()) return;
  for (const InstrRef& w : instr->wait_for) {
    if (w.get() == pred.get()) return;
  }
  instr->wait_for.push_back(pred);
}

void VirtualMachine::ConsumeDependences(Instruction* instr) {
  InstructionPolicy* policy = instr->policy();
  for (const BlobPtr& blob : policy->writes()) {
    blob->MarkIssued();
    Dependence& dep = blob->dependence();
    Connect(instr, dep.last_writer);
    for (const InstrRef& r : dep.readers) Connect(instr, r);
    dep.readers.clear();
    dep.last_writer = InstrRef(instr);
  }
  for (const BlobPtr& blob : policy->reads()) {
    const auto& writes = policy->writes();
    if (std::find(writes.begin(), writes.end(), blob) != writes.end()) continue;
    blob->MarkIssued();
    Dependence& dep = blob->dependence();
    Connect(instr, dep.last_writer);
    dep.readers.push_back(InstrRef(instr));
    if (dep.readers.size() >= 64 && dep.readers.size() == dep.readers.capacity()) {
      // A tensor read a million times must not keep a million finished readers alive: a full
      // list drops its finished readers, and grows now if that freed less than half of it, so
      // the next prune waits for at least as many reads again (constant time per read, amortised).
      dep.readers.RemoveIf([](const InstrRef& r) { return r->done(); });
      if (dep.readers.size() > dep.readers.capacity() / 2) {
        dep.readers.reserve(2 * dep.readers.capacity());
      }
    }
  }
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
    std::unique_lock<SubmitMutex> lock(submit_mu_);
    Dependence& dep = blob->dependence();
    Instruction* last = nullptr;
    bool one_stream = true;
    auto consider = [&](const InstrRef& a) {
      if (!a || a->done()) return;
      if (last != nullptr && a->stream() != last->stream()) one_stream = false;
      if (last == nullptr || a->id() > last->id()) last = a.get();
    };
    consider(dep.last_writer);
    for (const InstrRef& r : dep.readers) consider(r);
    // OFL_VM_FOLD_RELEASE=0 issues a ReleaseTensor for every blob, to see each one in traces.
    const bool fold = fold_releases_ && !sync_mode_;
    // Every user finished (always so in OFL_VM_SYNC=1 mode unless another thread's work is
    // blocked): nothing to order the free after.
    const bool all_done = last == nullptr && (fold_releases_ || sync_mode_);
    // The block counts as free from the tensor's death on (PyTorch's rule), although the free
    // itself waits for the users to complete. Marked before the free is arranged, so it is
    // marked before the free can happen.
    if (last != nullptr || !all_done) blob->MarkDead();
    if (all_done || (fold && one_stream)) {
      bool attached = false;
      if (last != nullptr) {
        // On one stream, everything else using the blob runs before `last`.
        EagerBlobObject* head = last->releases_.load(std::memory_order_acquire);
        while (head != kReleasesClosed) {
          blob->next_release = head;
          if (last->releases_.compare_exchange_weak(head, blob.get(), std::memory_order_acq_rel)) {
            attached = true;
            break;
          }
        }
        if (attached && last->trace) last->folded_releases.push_back(blob->id());
      }
      // The blob stays alive until `last` retires: its policy holds it.
      dep.last_writer.reset();
      dep.readers.clear();
      lock.unlock();
      if (!attached) blob->Free();  // every user has finished
      return;
    }
    lock.unlock();
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
  const bool tracing = tracer_.tracing();
  const int issue_thread = tracing ? TraceThreadIndex() : 0;
  const bool log_debug = LogDebugEnabled();
  const bool on_worker = RunningInstruction() != nullptr;
  // Instructions this thread runs itself once the lock is released, in issue order (their streams
  // are claimed for them meanwhile). Batches are small; a few fit inline.
  Instruction* run_here_inline[4];
  SmallObjectVector<Instruction*> run_here_more;
  size_t n_run_here = 0;
  Graveyard graveyard;
  {
    std::lock_guard<SubmitMutex> lock(submit_mu_);
    for (InstrRef& ref : batch) {
      Instruction* instr = ref.get();
      instr->id_ = next_instr_id_.fetch_add(1, std::memory_order_relaxed);
      instr->trace = tracing;
      if (tracing) {
        instr->issue_ns = NowNs();
        instr->issue_thread = issue_thread;
      }
      ConsumeDependences(instr);
      pressure_.CountSubmitted();
      const bool run_here = ClaimInline(instr, on_worker);
      if (log_debug) {
        Logger().debug("[#{} {}] issued {} {} (waits for {} instruction(s) on other streams){}",
                       instr->id(), instr->stream()->name(), instr->policy()->policy_name(),
                       instr->policy()->op_name(), instr->wait_for.size(),
                       run_here ? "; runs inline on the issuing thread" : "");
      }
      in_flight_.push_back(ref);
      if (run_here) {
        if (n_run_here < 4) {
          run_here_inline[n_run_here] = instr;
        } else {
          run_here_more.push_back(instr);
        }
        ++n_run_here;
      } else {
        instr->stream()->Push(instr);
      }
    }
    Reap(false, &graveyard);
  }
  // The batch holds a reference to each, so none is destroyed by another thread's Reap meanwhile.
  for (size_t i = 0; i < n_run_here; ++i) {
    Instruction* instr = i < 4 ? run_here_inline[i] : run_here_more[i - 4];
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

bool VirtualMachine::ClaimInline(Instruction* instr, bool on_worker) {
  // A worker issuing work keeps it asynchronous: its own stream may be the one claimed, and the
  // work it issues may wait for what it runs.
  if (on_worker || !instr->wait_for.empty()) return false;
  const int64_t limit = inline_bytes_.load(std::memory_order_relaxed);
  const int64_t bytes = instr->policy()->InlineBytes();
  if (limit <= 0 || bytes < 0 || bytes > limit) return false;
  return instr->stream()->TryClaimInline();
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

void VirtualMachine::ForgetInDependences(Instruction* instr) {
  const InstructionPolicy* policy = instr->policy();
  if (policy == nullptr) return;
  for (const BlobPtr& blob : policy->writes()) {
    Dependence& dep = blob->dependence();
    if (dep.last_writer.get() == instr) dep.last_writer.reset();
  }
  for (const BlobPtr& blob : policy->reads()) {
    ReaderList& readers = blob->dependence().readers;
    for (size_t i = 0; i < readers.size(); ++i) {
      if (readers[i].get() == instr) {
        readers[i] = std::move(readers.back());
        readers.pop_back();
        break;
      }
    }
  }
}

void VirtualMachine::Reap(bool all, Graveyard* graveyard) {
  auto retire = [&](Instruction* instr) {
    if (instr->trace) {
      tracer_.RecordTrace(instr);
    } else {
      // A finished instruction orders nothing (Connect and Release skip it), so the blobs it used
      // let go of it: a live tensor must not keep its producer's instruction alive. A traced one
      // stays, so that the trace shows edges to it.
      ForgetInDependences(instr);
    }
    // Dropping the policy releases the blobs it held: a finished instruction left in a blob's
    // dependence must not keep other blobs (and, through them, itself) alive.
    graveyard->Add(instr->ReleaseOperands());
  };
  while (!in_flight_.empty() && in_flight_.front()->done()) {
    retire(in_flight_.front().get());
    in_flight_.pop_front();
  }
  // An upper bound on what is in flight, without reading the workers' counter.
  const int64_t pending = pressure_.PendingBound();
  if (all || static_cast<int64_t>(in_flight_.size()) > 2 * pending + 1024) {
    // Something slow sits at the front; retire the finished ones behind it.
    std::deque<InstrRef, SmallObjectAllocator<InstrRef>> keep;
    for (InstrRef& ref : in_flight_) {
      if (ref->done()) {
        retire(ref.get());
      } else {
        keep.push_back(std::move(ref));
      }
    }
    in_flight_.swap(keep);
  }
}

}  // namespace ofl::vm
