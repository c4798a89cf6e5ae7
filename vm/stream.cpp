#include "vm/stream.h"

#include <algorithm>

#include "vm/instruction.h"
#include "vm/spin.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

std::string to_string(StreamRole role) {
  switch (role) {
    case StreamRole::kCompute:
      return "compute";
    case StreamRole::kHost2Device:
      return "h2d";
    case StreamRole::kDevice2Host:
      return "d2h";
    case StreamRole::kAux:
      return "aux";
    case StreamRole::kCollective:
      return "collective";
  }
  return "unknown";
}

Stream::Stream(VirtualMachine* vm, Device device, StreamRole role, CachingAllocator* pool,
               DeviceBackend* backend)
    : vm_(vm),
      device_(device),
      role_(role),
      pool_(pool),
      backend_(backend),
      async_(!backend->synchronous()),
      completion_(&CompletionPolicy::For(backend->synchronous())),
      name_(device.str() + "/" + to_string(role)),
      ring_(kRingCapacity, nullptr) {
  native_ = backend_->create_stream(device_.index());
  worker_ = std::thread([this] { WorkerLoop(); });
  if (async_) completer_ = std::thread([this] { CompletionLoop(); });
}

Stream::~Stream() { Stop(); }

void Stream::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stop_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_one();
  }
  if (worker_.joinable()) worker_.join();
  if (completer_.joinable()) {
    // It finishes everything launched before it returns (launched work completes without host
    // action), and it must be gone before the events are destroyed: it may be blocked on one.
    {
      std::lock_guard<std::mutex> lock(pending_mu_);
      completer_stop_ = true;
    }
    pending_cv_.notify_one();
    completer_.join();
  }
  try {
    std::lock_guard<std::mutex> lock(events_mu_);
    for (NativeEvent e : free_events_) backend_->destroy_event(device_.index(), e);
    free_events_.clear();
    backend_->destroy_stream(device_.index(), native_);
  } catch (const std::exception&) {
    // A failed device: nothing more can be returned to it.
  }
}

NativeEvent Stream::TakeEvent() {
  {
    std::lock_guard<std::mutex> lock(events_mu_);
    if (!free_events_.empty()) {
      NativeEvent e = free_events_.back();
      free_events_.pop_back();
      return e;
    }
  }
  return backend_->create_event(device_.index());
}

void Stream::RecycleEvent(NativeEvent event) {
  std::lock_guard<std::mutex> lock(events_mu_);
  free_events_.push_back(event);
}

void Stream::TrackLaunched(Instruction* instr) {
  try {
    NativeEvent event = TakeEvent();
    instr->event_ = event;
    backend_->record_event(event, native_);
  } catch (const std::exception& e) {
    vm_->FailLaunched(instr, std::string("recording its completion event failed: ") + e.what(),
                      dynamic_cast<const DeviceFailed*>(&e) != nullptr);
    return;
  }
  // Same-device successors wait for this, then wait on the device for the event recorded above.
  vm_->PublishLaunched(instr);
  if (CompletionPolicy::broken_rule() == BrokenRule::kCompleteAtLaunch) {
    vm_->Finish(instr);  // the broken rule a test shows the simulator catches
    return;
  }
  bool wake;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    pending_.push_back(instr);
    incomplete_.fetch_add(1, std::memory_order_release);
    wake = completer_idle_;
  }
  // A completion thread that is busy finds this instruction behind the one it waits for.
  if (wake) pending_cv_.notify_one();
}

void Stream::FailPendingLocked(const std::exception& e) {
  // The fault covers the pending instructions and everything launched after them on the stream.
  const bool failed = dynamic_cast<const DeviceFailed*>(&e) != nullptr;
  const std::string what = std::string("the device reported a fault: ") + e.what();
  while (!pending_.empty()) {
    Instruction* i = pending_.front();
    pending_.pop_front();
    incomplete_.fetch_sub(1, std::memory_order_release);
    vm_->FailLaunched(i, what, failed);
  }
}

bool Stream::PollCompletions() {
  if (incomplete_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(pending_mu_);
  while (!pending_.empty()) {
    Instruction* instr = pending_.front();
    // Completion follows dependence: an instruction that waited on the device for another stream's
    // work is finished only after that work was (so a fault observed there reaches it first).
    for (const InstrRef& p : instr->wait_for) {
      if (!p->done()) return true;
    }
    bool complete = false;
    try {
      complete = backend_->query_event(instr->event_);
    } catch (const std::exception& e) {
      FailPendingLocked(e);
      return false;
    }
    if (!complete) return true;
    // A thread in SyncAndPoll on this instruction may have taken its fault from the device (a
    // backend reports it once) and not yet failed it (it needs pending_mu_, held here): finishing
    // it now would report it clean and lose the fault. That thread polls once its wait is handled.
    if (std::find(syncing_.begin(), syncing_.end(), instr) != syncing_.end()) return true;
    pending_.pop_front();
    incomplete_.fetch_sub(1, std::memory_order_release);
    vm_->Finish(instr);
  }
  return false;
}

void Stream::SyncAndPoll(Instruction* instr) {
  // event_ was written before launched_ was published (the caller saw it) and changes only when
  // the instruction is destroyed, which the caller's reference prevents. An instruction finished
  // without recording one (its record failed) is done already, or is about to be.
  const NativeEvent event = instr->event_;
  if (!instr->done() && event != nullptr) {
    {
      std::lock_guard<std::mutex> lock(pending_mu_);
      syncing_.push_back(instr);
    }
    // Removes this thread's entry (one of possibly several for instr); pending_mu_ held.
    auto leave = [this, instr] {
      syncing_.erase(std::find(syncing_.begin(), syncing_.end(), instr));
    };
    try {
      backend_->synchronize_event(event);
    } catch (const std::exception& e) {
      // The backend may report the fault only once (the sim's asynchronous error, CUDA's sticky
      // one): it is this stream's pending work's now, as if a query had thrown it.
      std::lock_guard<std::mutex> lock(pending_mu_);
      FailPendingLocked(e);
      leave();
      return;
    }
    std::lock_guard<std::mutex> lock(pending_mu_);
    leave();
  }
  PollCompletions();
}

void Stream::CompletionLoop() {
  try {
    backend_->set_device(device_.index());
  } catch (const std::exception&) {
    // The worker reports it (the device is marked failed); waiting on events needs no device.
  }
  std::vector<InstrRef> preds;
  std::unique_lock<std::mutex> lock(pending_mu_);
  for (;;) {
    if (pending_.empty()) {
      if (completer_stop_) return;
      completer_idle_ = true;
      pending_cv_.wait(lock);
      completer_idle_ = false;
      continue;
    }
    // Held across the unlocked wait: another thread may finish the front meanwhile, and its
    // issuer may then retire it; the reference keeps its event from being recycled under us.
    InstrRef front(pending_.front());
    // Read while it is pending: once finished, its wait_for belongs to the issuing side (Reap).
    for (const InstrRef& p : front->wait_for) {
      if (!p->done()) preds.push_back(p);
    }
    lock.unlock();
    // Its device predecessors finished on the device before its own event; their streams'
    // completion threads finish them (no cycle: each waits only for lower instruction ids).
    for (const InstrRef& p : preds) vm_->WaitFinished(p.get());
    preds.clear();
    SyncAndPoll(front.get());
    front.reset();
    lock.lock();
  }
}

void Stream::Push(Instruction* instr) {
  const uint64_t t = tail_.load(std::memory_order_relaxed);
  // head_ is written by the worker on every instruction; reading it on every push would pull its
  // cache line across cores each time, so the producer keeps a stale copy until it looks full.
  while (t - head_seen_ >= kRingCapacity) {
    head_seen_ = head_.load(std::memory_order_acquire);
    if (t - head_seen_ >= kRingCapacity) std::this_thread::yield();
  }
  ring_[t & (kRingCapacity - 1)] = instr;
  tail_.store(t + 1, std::memory_order_seq_cst);
  // Pairs with the worker's store to sleeping_ then load of tail_: one of the two sees the other.
  if (sleeping_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_one();
  }
}

bool Stream::TryClaimInline() {
  // idle()'s acquire: the worker's run of everything before is visible to the run here.
  if (async_ || inline_claim_.load(std::memory_order_relaxed) || !idle()) return false;
  // Stored before any later Push publishes tail_ (seq_cst), so a worker that sees that slot sees
  // the claim too.
  inline_claim_.store(true, std::memory_order_relaxed);
  return true;
}

void Stream::WorkerLoop() {
  const int64_t spin_ns = vm_->spin_ns();
  try {
    backend_->set_device(device_.index());
  } catch (const std::exception& e) {
    vm_->devices().MarkDeviceFailed(device_, std::string("set_device failed: ") + e.what());
  }
  uint64_t head = head_.load(std::memory_order_relaxed);
  for (;;) {
    // Idle, even with work on the device: the completion thread observes its completions.
    if (head == tail_.load(std::memory_order_acquire)) {
      const bool got =
          SpinUntil([&] { return head != tail_.load(std::memory_order_acquire); }, spin_ns);
      if (!got) {
        std::unique_lock<std::mutex> lock(mu_);
        sleeping_.store(true, std::memory_order_seq_cst);
        while (head == tail_.load(std::memory_order_seq_cst) && !stop_.load()) cv_.wait(lock);
        sleeping_.store(false, std::memory_order_relaxed);
      }
      if (head == tail_.load(std::memory_order_acquire)) {
        if (stop_.load()) return;
        continue;
      }
    }
    Instruction* instr = ring_[head & (kRingCapacity - 1)];
    ++head;
    head_.store(head, std::memory_order_release);
    // An instruction issued before this one may be running inline on its issuing thread.
    // It is small (that is what made it inline), so a short wait.
    while (inline_claim_.load(std::memory_order_acquire)) std::this_thread::yield();
    vm_->Run(instr);
    retired_.store(head, std::memory_order_release);
    // Work that completed at once (a short kernel) is finished here, with no hand-off.
    if (async_) PollCompletions();
  }
}

}  // namespace ofl::vm
