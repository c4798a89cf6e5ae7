#include "vm/virtual_machine.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "oneflow_lite/error.h"
#include "vm/instructions_builder.h"
#include "vm/log.h"
#include "vm/spin.h"

namespace ofl::vm {

namespace {
int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0') ? static_cast<int64_t>(x) : fallback;
}

void ShutdownAtExit() { VirtualMachine::Get().Shutdown(); }
}  // namespace

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

VirtualMachine& VirtualMachine::Get() {
  static VirtualMachine* vm = [] {
    auto* v = new VirtualMachine();
    std::atexit(&ShutdownAtExit);
    return v;
  }();
  return *vm;
}

VirtualMachine::VirtualMachine() {
  sync_mode_ = EnvInt("OFL_VM_SYNC", 0) != 0;
  spin_ns_ = std::max<int64_t>(0, EnvInt("OFL_VM_SPIN_US", 50)) * 1000;
  const int64_t high = EnvInt("OFL_VM_HIGH_WATER_MARK", 16384);
  SetWaterMarks(high, EnvInt("OFL_VM_LOW_WATER_MARK", high / 2));
  if (EnvInt("OFL_TRACE_VM", 0) != 0) tracing_ = true;
  fold_releases_ = EnvInt("OFL_VM_FOLD_RELEASE", 1) != 0;
  Logger();  // reads OFL_LOG_LEVEL once, before any worker logs
}

void VirtualMachine::SetWaterMarks(int64_t high, int64_t low) {
  const int64_t max_high = static_cast<int64_t>(Stream::kRingCapacity / 2);
  if (high <= 0 || low <= 0 || low >= high || high > max_high) {
    throw InvalidArgument("set_water_marks: need 0 < low < high <= " + std::to_string(max_high) +
                          ", got high=" + std::to_string(high) + " low=" + std::to_string(low));
  }
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    high_water_.store(high, std::memory_order_relaxed);
    low_water_.store(low, std::memory_order_relaxed);
  }
  done_cv_.notify_all();  // a blocked submitter re-checks against the new marks
}

CachingAllocator* VirtualMachine::GetAllocator(const Device& device) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  auto& pool = pools_[device.str()];
  if (!pool) {
    if (!device.is_cpu()) {
      pools_.erase(device.str());
      throw DeviceError(device.str() +
                        ": this build of oneflow_lite has no CUDA support, or no CUDA device is "
                        "present; use Device(\"cpu\")");
    }
    pool = std::make_unique<CachingAllocator>(device, std::make_unique<CpuAllocatorBackend>());
  }
  return pool.get();
}

Stream* VirtualMachine::GetStream(const Device& device, StreamRole role) {
  const int index = device.index();
  std::atomic<Stream*>* fast = nullptr;
  if (index < kMaxFastDeviceIndex) {
    fast = &fast_streams_[static_cast<int>(device.type())][index][static_cast<int>(role)];
    if (Stream* s = fast->load(std::memory_order_acquire)) return s;
  }
  CachingAllocator* pool = GetAllocator(device);
  std::lock_guard<std::mutex> lock(streams_mu_);
  auto& s = streams_[{device.str(), static_cast<int>(role)}];
  if (!s) {
    s = std::make_unique<Stream>(this, device, role, pool);
    s->set_index(static_cast<int>(stream_list_.size()));
    stream_list_.push_back(s.get());
  }
  if (fast != nullptr) fast->store(s.get(), std::memory_order_release);
  return s.get();
}

std::vector<Stream*> VirtualMachine::streams() {
  std::lock_guard<std::mutex> lock(streams_mu_);
  return stream_list_;
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
    Dependence& dep = blob->dependence();
    Connect(instr, dep.last_writer);
    for (const InstrRef& r : dep.readers) Connect(instr, r);
    dep.readers.clear();
    dep.prune_at = 64;
    dep.last_writer = InstrRef(instr);
  }
  for (const BlobPtr& blob : policy->reads()) {
    const auto& writes = policy->writes();
    if (std::find(writes.begin(), writes.end(), blob) != writes.end()) continue;
    Dependence& dep = blob->dependence();
    Connect(instr, dep.last_writer);
    dep.readers.emplace_back(instr);
    if (dep.readers.size() >= dep.prune_at) {
      // A tensor read a million times must not keep a million finished readers alive.
      dep.readers.erase(std::remove_if(dep.readers.begin(), dep.readers.end(),
                                       [](const InstrRef& r) { return r->done(); }),
                        dep.readers.end());
      dep.prune_at = std::max<size_t>(64, dep.readers.size() * 2);
    }
  }
}

void VirtualMachine::Release(BlobPtr blob) {
  if (shut_down_.load(std::memory_order_relaxed)) return;  // the blob frees its block when it dies
  if (fold_releases_ && !sync_mode_) {
    std::unique_lock<std::mutex> lock(submit_mu_);
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
    if (one_stream) {
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
  }
  PhysicalRun([&](InstructionsBuilder* b) { b->ReleaseTensor(std::move(blob)); });
}

void VirtualMachine::WaitForCapacity() {
  if (pending_.load(std::memory_order_relaxed) < high_water_.load(std::memory_order_relaxed))
    return;
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(done_mu_);
    done_cv_.wait(lock, [&] {
      return pending_.load(std::memory_order_seq_cst) <=
                 low_water_.load(std::memory_order_relaxed) ||
             shut_down_.load();
    });
  }
  waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void VirtualMachine::Submit(FastVector<InstrRef>& batch) {
  if (shut_down_.load(std::memory_order_relaxed)) {
    for (InstrRef& ref : batch) {
      auto err = std::make_shared<VmError>();
      err->kind = ErrorKind::kGeneric;
      err->op_name = ref->policy()->op_name();
      err->instruction_id = ref->id();
      err->message = err->op_name + " (instruction #" + std::to_string(ref->id()) +
                     ") was not run: the virtual machine has shut down (process exit)";
      ref->error_ = err;
      ref->done_.store(true, std::memory_order_seq_cst);
    }
    return;
  }
  WaitForCapacity();
  const bool tracing = tracing_.load(std::memory_order_relaxed);
  const bool log_debug = LogDebugEnabled();
  Graveyard graveyard;
  std::lock_guard<std::mutex> lock(submit_mu_);
  for (InstrRef& ref : batch) {
    Instruction* instr = ref.get();
    instr->id_ = next_instr_id_.fetch_add(1, std::memory_order_relaxed);
    instr->trace = tracing;
    if (tracing) instr->issue_ns = NowNs();
    ConsumeDependences(instr);
    const int64_t now_pending = pending_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (now_pending > peak_pending_.load(std::memory_order_relaxed)) {
      peak_pending_.store(now_pending, std::memory_order_relaxed);
    }
    if (log_debug) {
      Logger().debug("[#{} {}] issued {} {} (waits for {} instruction(s) on other streams)",
                     instr->id(), instr->stream()->name(), instr->policy()->policy_name(),
                     instr->policy()->op_name(), instr->wait_for.size());
    }
    in_flight_.push_back(ref);
    instr->stream()->Push(instr);
  }
  Reap(false, &graveyard);
}

void VirtualMachine::Run(Instruction* instr) {
  for (const InstrRef& pred : instr->wait_for) WaitDone(pred.get());
  InstructionPolicy* policy = instr->policy();
  if (instr->trace) {
    int64_t ready = instr->issue_ns;
    for (const InstrRef& p : instr->trace_preds) ready = std::max(ready, p->end_ns);
    instr->ready_ns = ready;
    instr->start_ns = std::max(ready, NowNs());
  }
  const bool log_debug = LogDebugEnabled();
  if (log_debug) {
    Logger().debug("[#{} {}] start {} {}", instr->id(), instr->stream()->name(),
                   policy->policy_name(), policy->op_name());
  }
  VmErrorPtr poison;
  if (!policy->RunsOnPoisonedInputs()) {
    for (const BlobPtr& b : policy->reads()) {
      if (b->error()) poison = b->error();
    }
    for (const BlobPtr& b : policy->writes()) {
      if (!poison && b->error()) poison = b->error();
    }
  }
  if (poison) {
    instr->error_ = poison;
    for (const BlobPtr& b : policy->writes()) b->set_error(poison);
    if (log_debug) {
      Logger().debug("[#{} {}] skipped {}: an input is poisoned by #{} {}", instr->id(),
                     instr->stream()->name(), policy->op_name(), poison->instruction_id,
                     poison->op_name);
    }
  } else {
    ErrorKind kind = ErrorKind::kGeneric;
    std::string what;
    bool failed = true;
    try {
      policy->Prepare(instr);
      policy->Compute(instr);
      failed = false;
    } catch (const OutOfMemory& e) {
      kind = ErrorKind::kOutOfMemory;
      what = e.what();
    } catch (const InvalidArgument& e) {
      kind = ErrorKind::kInvalidArgument;
      what = e.what();
    } catch (const DeviceError& e) {
      kind = ErrorKind::kDevice;
      what = e.what();
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "unknown exception";
    }
    if (failed) {
      auto err = std::make_shared<VmError>();
      err->kind = kind;
      err->op_name = policy->op_name();
      err->instruction_id = instr->id();
      err->message = policy->op_name() + " (instruction #" + std::to_string(instr->id()) + ", " +
                     policy->policy_name() + " on " + instr->stream()->name() + ") failed: " + what;
      instr->error_ = err;
      for (const BlobPtr& b : policy->writes()) b->set_error(err);
      RecordError(err);
      Logger().error("[#{} {}] {}", instr->id(), instr->stream()->name(), err->message);
    }
  }
  // Free the blobs whose last user this was; closing the list makes later pushes fail.
  EagerBlobObject* dead = instr->releases_.exchange(kReleasesClosed, std::memory_order_acq_rel);
  while (dead != nullptr) {
    EagerBlobObject* next = dead->next_release;
    dead->Free();
    dead = next;
  }
  if (instr->trace) instr->end_ns = std::max(instr->start_ns, NowNs());
  if (log_debug) {
    Logger().debug("[#{} {}] done {} {}", instr->id(), instr->stream()->name(),
                   policy->policy_name(), policy->op_name());
  }
  Complete(instr);
}

void VirtualMachine::Complete(Instruction* instr) {
  pending_.fetch_sub(1, std::memory_order_relaxed);
  // After this store the instruction belongs to the issuing side; the worker must not touch it.
  instr->done_.store(true, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(done_mu_);
    done_cv_.notify_all();
  }
}

void VirtualMachine::WaitDone(Instruction* instr) {
  if (SpinUntil([&] { return instr->done(); }, spin_ns_)) return;
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(done_mu_);
    done_cv_.wait(lock, [&] { return instr->done_.load(std::memory_order_seq_cst); });
  }
  waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void VirtualMachine::Wait(Instruction* instr) { WaitDone(instr); }

void VirtualMachine::ThrowIfFailed(Instruction* instr) {
  const VmErrorPtr& err = instr->error();
  if (!err) return;
  err->reported.store(true);
  err->Throw();
}

void VirtualMachine::RecordError(const VmErrorPtr& err) {
  std::lock_guard<std::mutex> lock(errors_mu_);
  unreported_.push_back(err);
}

void VirtualMachine::Reap(bool all, Graveyard* graveyard) {
  auto retire = [&](Instruction* instr) {
    if (instr->trace) {
      TraceRecord rec;
      rec.id = instr->id();
      rec.policy = instr->policy()->policy_name();
      rec.op = instr->policy()->op_name();
      rec.stream = instr->stream()->name();
      for (const BlobPtr& b : instr->policy()->reads()) rec.reads.push_back(b->id());
      for (const BlobPtr& b : instr->policy()->writes()) rec.writes.push_back(b->id());
      rec.deps = instr->dep_ids;
      rec.dep_cross_stream = instr->dep_cross_stream;
      rec.allocs = instr->allocs;
      rec.issue_ns = instr->issue_ns;
      rec.ready_ns = instr->ready_ns;
      rec.start_ns = instr->start_ns;
      rec.end_ns = instr->end_ns;
      if (instr->error()) rec.error = instr->error()->message;
      rec.folded_releases.assign(instr->folded_releases.begin(), instr->folded_releases.end());
      std::lock_guard<std::mutex> lock(trace_mu_);
      trace_.push_back(std::move(rec));
    }
    // Dropping the policy releases the blobs it held: a finished instruction left in a blob's
    // dependence must not keep other blobs (and, through them, itself) alive.
    graveyard->Add(instr->ReleaseOperands());
  };
  while (!in_flight_.empty() && in_flight_.front()->done()) {
    retire(in_flight_.front().get());
    in_flight_.pop_front();
  }
  const int64_t pending = pending_.load(std::memory_order_relaxed);
  if (all || static_cast<int64_t>(in_flight_.size()) > 2 * pending + 1024) {
    // Something slow sits at the front; retire the finished ones behind it.
    std::deque<InstrRef, FastAllocator<InstrRef>> keep;
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

void VirtualMachine::Sync() {
  FastVector<InstrRef> barriers;
  for (Stream* s : streams()) {
    barriers.emplace_back(new Instruction(0, s, std::make_unique<BarrierPolicy>()));
  }
  FastVector<InstrRef> batch = barriers;
  Submit(batch);
  for (const InstrRef& b : barriers) WaitDone(b.get());
  {
    Graveyard graveyard;
    std::lock_guard<std::mutex> lock(submit_mu_);
    Reap(true, &graveyard);
  }
  std::vector<VmErrorPtr> errors;
  {
    std::lock_guard<std::mutex> lock(errors_mu_);
    errors.swap(unreported_);
  }
  VmErrorPtr first;
  int64_t more = 0;
  for (const VmErrorPtr& e : errors) {
    if (e->reported.exchange(true)) continue;
    if (!first) {
      first = e;
    } else {
      ++more;
    }
  }
  if (first) {
    first->Throw(more == 0 ? std::string()
                           : " [and " + std::to_string(more) +
                                 " more error(s) raised inside the VM since the last sync]");
  }
}

void VirtualMachine::SetTracing(bool on) { tracing_.store(on); }

std::vector<TraceRecord> VirtualMachine::TakeTrace() {
  {
    Graveyard graveyard;
    std::lock_guard<std::mutex> lock(submit_mu_);
    Reap(true, &graveyard);
  }
  std::lock_guard<std::mutex> lock(trace_mu_);
  std::vector<TraceRecord> out;
  out.swap(trace_);
  std::sort(out.begin(), out.end(),
            [](const TraceRecord& a, const TraceRecord& b) { return a.id < b.id; });
  return out;
}

void VirtualMachine::Shutdown() {
  // Let queued work finish while it makes progress; give up on work that is stuck (a callback
  // waiting for something that will never come) so that exit never hangs.
  const int64_t stall_ns = std::max<int64_t>(1, EnvInt("OFL_VM_EXIT_STALL_MS", 2000)) * 1000000;
  int64_t last = pending_.load();
  int64_t last_change = NowNs();
  while (pending_.load() > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const int64_t now = pending_.load();
    if (now != last) {
      last = now;
      last_change = NowNs();
    } else if (NowNs() - last_change > stall_ns) {
      Logger().warn("exiting with {} instruction(s) still in flight that made no progress", now);
      break;
    }
  }
  shut_down_.store(true);
  std::lock_guard<std::mutex> lock(done_mu_);
  done_cv_.notify_all();
}

}  // namespace ofl::vm
