// The waiting side of the VirtualMachine: Wait and Sync, back-pressure on submitters, hang reports
// (what every pending instruction waits for), and the check that stops a VM worker from waiting for
// work queued behind itself, and draining a device's launched work.
//
// The invariants these waits rely on (wake-ups, progress, abandoning, caller memory) are written
// down with the rest of the VM's in vm/THREADING.md.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/wait_hooks.h"
#include "vm/instructions_builder.h"
#include "vm/log.h"
#include "vm/spin.h"
#include "vm/virtual_machine.h"

namespace ofl {

namespace {
std::atomic<void (*)()> before_wait{nullptr};
std::atomic<void (*)()> after_wait{nullptr};
std::atomic<bool (*)()> interrupted_wait{nullptr};
}  // namespace

void set_wait_hooks(const WaitHooks& hooks) {
  before_wait.store(hooks.before, std::memory_order_release);
  after_wait.store(hooks.after, std::memory_order_release);
  interrupted_wait.store(hooks.interrupted, std::memory_order_release);
}

}  // namespace ofl

namespace ofl::vm {

namespace {
// The program's wait hooks (ofl::set_wait_hooks) around one wait of an issuing thread. Made only
// where no lock of the VM is held, so a binding that takes its interpreter lock back in `after`
// never holds that lock while it waits for one of ours (THREADING.md, "Waits and bindings").
thread_local int hook_scopes = 0;  // WaitHookScopes open on this thread

class WaitHookScope {
 public:
  WaitHookScope() : after_(after_wait.load(std::memory_order_acquire)) {
    if (void (*before)() = before_wait.load(std::memory_order_acquire)) before();
    ++hook_scopes;
  }
  ~WaitHookScope() {
    --hook_scopes;
    if (after_ != nullptr) after_();
  }
  WaitHookScope(const WaitHookScope&) = delete;
  WaitHookScope& operator=(const WaitHookScope&) = delete;

 private:
  void (*after_)();
};

// The program's `interrupted` hook, for a wait inside a WaitHookScope (a wait of the program's
// own thread, between its `before` and `after`); null elsewhere.
bool (*InterruptHook())() {
  return hook_scopes > 0 ? interrupted_wait.load(std::memory_order_acquire) : nullptr;
}

std::string Describe(const Instruction* instr) {
  return "#" + std::to_string(instr->id()) + " " + instr->policy()->policy_name() + " " +
         instr->policy()->op_name() + " on " + instr->stream()->name();
}

std::string Seconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", static_cast<double>(ns) / 1e9);
  return buf;
}
}  // namespace

template <class Ready>
bool VirtualMachine::WaitWithProgress(Ready&& ready) {
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  struct Leave {
    std::atomic<int32_t>& waiters;
    ~Leave() { waiters.fetch_sub(1, std::memory_order_relaxed); }
  } leave{waiters_};
  const int64_t timeout_ns = wait_timeout_ns_.load(std::memory_order_relaxed);
  bool (*const interrupted)() = InterruptHook();
  if (timeout_ns <= 0 && interrupted == nullptr) {
    std::unique_lock<std::mutex> lock(done_mu_);
    done_cv_.wait(lock, ready);
    return true;
  }
  // Progress is sampled once per window: a window in which nothing completed anywhere is a hang.
  // With an `interrupted` hook the sleep is cut into polls, the hook asked after each.
  uint64_t completed = CompletedCount();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (;;) {
    auto until = deadline;
    bool poll = false;
    if (interrupted != nullptr) {
      const auto next_poll =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitInterruptPollMs);
      poll = timeout_ns <= 0 || next_poll < deadline;
      if (poll) until = next_poll;
    }
    {
      std::unique_lock<std::mutex> lock(done_mu_);
      if (done_cv_.wait_until(lock, until, ready)) return true;
    }
    if (poll) {
      if (interrupted()) {
        throw WaitInterrupted(
            "the wait was interrupted (the wait hooks' `interrupted`: a signal); the awaited work "
            "goes on in the background");
      }
      continue;
    }
    const uint64_t now_completed = CompletedCount();
    if (now_completed == completed) return false;
    completed = now_completed;
    deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  }
}

void VirtualMachine::WaitForCapacity() {
  if (!pressure_.Full()) return;
  // A callback or kernel issuing work: the backlog may be queued behind the instruction it runs.
  if (RunningInstruction()) return;
  bool drained;
  {
    WaitHookScope hooks;  // Submit calls this before it takes the engine's lock
    drained = WaitWithProgress([&] { return pressure_.Eased() || shut_down_.load(); });
  }
  if (drained) return;
  std::string msg;
  {
    std::lock_guard<SubmitMutex> lock(engine_.mutex());
    msg = "VM hang: a submission waited for back-pressure to ease (" + pressure_.Describe() +
          ") but no instruction completed anywhere in the VM " + "for " +
          Seconds(wait_timeout_ns_.load()) +
          " s (OFL_VM_TIMEOUT_SECONDS). The call that submitted was not run.\n" +
          DescribePending(nullptr);
  }
  Logger().error("{}", msg);
  throw Error(msg);
}

bool VirtualMachine::PolledDone(Instruction* instr) {
  return instr->done() || instr->stream()->completion().Poll(instr);
}

void VirtualMachine::WaitFinished(Instruction* instr) {
  if (SpinUntil([&] { return PolledDone(instr); }, spin_ns_)) return;
  instr->stream()->completion().WaitDevice(*this, instr);
  WaitDone(instr);
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

void VirtualMachine::WaitLaunched(Instruction* instr) {
  if (SpinUntil([&] { return instr->launched(); }, spin_ns_)) return;
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(done_mu_);
    done_cv_.wait(lock, [&] { return instr->launched_.load(std::memory_order_seq_cst); });
  }
  waiters_.fetch_sub(1, std::memory_order_relaxed);
}

bool VirtualMachine::WaitLaunchedOrGiveUp(Instruction* instr) {
  return WaitWithProgress([&] { return instr->launched_.load(std::memory_order_seq_cst); });
}

bool VirtualMachine::Interruptible() { return InterruptHook() != nullptr; }

void VirtualMachine::WaitDoneOrReport(Instruction* instr) {
  // The healthy path is WaitFinished's: spin, then sleep until a completion wakes us, on an
  // asynchronous stream in the backend's own wait for the instruction's event once it launched.
  if (SpinUntil([&] { return PolledDone(instr); }, spin_ns_)) return;
  bool progressing = true;
  try {
    progressing = instr->stream()->completion().WaitDeviceOrGiveUp(*this, instr);
    if (progressing &&
        WaitWithProgress([&] { return instr->done_.load(std::memory_order_seq_cst); })) {
      return;
    }
  } catch (const WaitInterrupted&) {
    // The caller may free its memory as soon as the exception reaches it: a copy into or out of
    // it that has not started is dropped (as a hang report drops it), one that has is waited for.
    if (!instr->done() && instr->policy()->TouchesCallerMemory()) {
      uint8_t queued = Instruction::kQueued;
      if (!instr->policy()->Abandonable() ||
          !instr->run_state_.compare_exchange_strong(queued, Instruction::kAbandoned,
                                                     std::memory_order_seq_cst)) {
        WaitDone(instr);
      }
    }
    throw;
  }
  bool started = false;
  const std::string report =
      AbandonAndReport(instr, wait_timeout_ns_.load(std::memory_order_relaxed), &started);
  if (instr->done()) return;  // it finished while the report was written
  if (started && instr->policy()->TouchesCallerMemory()) {
    // Its callback copies into or out of the caller's memory right now: the caller may free that
    // memory as soon as we return or throw. The copy is bounded, so wait for its end and return
    // normally: nothing is lost, the wait only took longer than the timeout.
    Logger().warn("[#{} {}] {} is slow, not hung (it copies the caller's memory); waiting for it",
                  instr->id(), instr->stream()->name(), instr->policy()->op_name());
    WaitDone(instr);
    return;
  }
  Logger().error("{}", report);
  throw Error(report);
}

void VirtualMachine::DrainDevice(const Device& device) {
  std::vector<Stream*> mine;
  for (Stream* s : devices_.streams()) {
    if (s->device() == device && !s->completion().complete_at_return()) mine.push_back(s);
  }
  // Every stream of the device is polled in each round, the caller's own included: a launched
  // instruction on one stream may wait on the device for one launched on another, whose completion
  // only that stream's poll observes. When the caller is that stream's worker (the out-of-memory
  // retry in Prepare), nobody else would ever poll it: draining one stream at a time would wait for
  // work that only the caller can complete (vm/THREADING.md, "Memory"). Everything launched
  // completes without host action, so the rounds end; a device that stops completing work is given
  // up on after the hang timeout with no completion anywhere, and the caller's retry then fails.
  const int64_t timeout_ns = wait_timeout_ns_.load(std::memory_order_relaxed);
  uint64_t completed = CompletedCount();
  int64_t last_progress = NowNs();
  for (;;) {
    bool busy = false;
    for (Stream* s : mine) busy = s->PollCompletions() || busy;
    if (!busy) return;
    const uint64_t now_completed = CompletedCount();
    if (now_completed != completed) {
      completed = now_completed;
      last_progress = NowNs();
    } else if (timeout_ns > 0 && NowNs() - last_progress > timeout_ns) {
      Logger().warn(
          "draining {}: no instruction completed for {} s; giving up on its launched work",
          device.str(), static_cast<double>(timeout_ns) / 1e9);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

uint64_t VirtualMachine::CompletedCount() { return pressure_.Completed(); }

std::string VirtualMachine::DescribePending(const Instruction* waited) {
  constexpr size_t kMaxListed = 32;
  std::vector<Instruction*> pending;
  for (const InstrRef& ref : engine_.in_flight()) {
    if (!ref->done_.load(std::memory_order_seq_cst)) pending.push_back(ref.get());
  }
  std::unordered_map<const Stream*, Instruction*> head;  // first pending per stream
  for (Instruction* p : pending) head.emplace(p->stream(), p);
  auto unfinished_preds = [](const Instruction* p) {
    std::string s;
    for (const InstrRef& w : p->wait_for) {
      if (w->done_.load(std::memory_order_seq_cst)) continue;
      s += (s.empty() ? "" : ", ") + std::string("#") + std::to_string(w->id()) + " (" +
           w->policy()->op_name() + " on " + w->stream()->name() + ")";
    }
    return s;
  };
  std::string msg =
      std::to_string(pending.size()) + " instruction(s) pending (id, policy, op, stream):";
  size_t listed = 0;
  for (Instruction* p : pending) {
    const bool is_head = head[p->stream()] == p;
    if (!is_head && p != waited && listed >= kMaxListed) continue;
    ++listed;
    msg += "\n  " + Describe(p) + (p == waited ? " [waited for]" : "") + ": ";
    const std::string preds = unfinished_preds(p);
    if (is_head) {
      msg += preds.empty() ? "at the head of its stream, running (or about to run)"
                           : "at the head of its stream, waiting for " + preds;
      const std::string detail = preds.empty() ? p->policy()->RunningDetail() : std::string();
      if (!detail.empty()) msg += "; " + detail;
    } else {
      const Instruction* h = head[p->stream()];
      msg += "queued behind #" + std::to_string(h->id()) + " (" + h->policy()->op_name() +
             ") on its stream";
      if (!preds.empty()) msg += "; also waits for " + preds;
    }
  }
  if (listed < pending.size()) {
    msg += "\n  ... and " + std::to_string(pending.size() - listed) + " more";
  }
  return msg;
}

std::string VirtualMachine::AbandonAndReport(Instruction* waited, int64_t stalled_ns,
                                             bool* started) {
  std::lock_guard<SubmitMutex> lock(engine_.mutex());
  uint8_t queued = Instruction::kQueued;
  const bool keep = !waited->policy()->Abandonable();
  const bool abandoned = !keep && waited->run_state_.compare_exchange_strong(
                                      queued, Instruction::kAbandoned, std::memory_order_seq_cst);
  *started = !abandoned;
  std::string msg = "VM hang: waited for " + waited->policy()->op_name() + " (instruction #" +
                    std::to_string(waited->id()) + ", " + waited->policy()->policy_name() + " on " +
                    waited->stream()->name() + ") but no instruction completed anywhere " +
                    "in the VM for " + Seconds(stalled_ns) + " s (OFL_VM_TIMEOUT_SECONDS). ";
  msg += abandoned ? "The wait gave up; #" + std::to_string(waited->id()) +
                         " has not started and will not run (its outputs are poisoned)."
         : keep ? "The wait gave up; #" + std::to_string(waited->id()) +
                      " is a collective that other ranks may be waiting for: it is never "
                      "cancelled and still runs when its turn comes."
                : "The wait gave up; #" + std::to_string(waited->id()) +
                      " is running and may still finish later.";
  return msg + "\n" + DescribePending(waited);
}

bool VirtualMachine::WaitsForQueuedWork(const Instruction* waited, const Instruction* running) {
  // Everything `waited` may wait for: its unfinished cross-stream predecessors and whatever is
  // ahead of it on its own stream, transitively. Reaching the running instruction or anything
  // queued behind it on its stream means the wait would never end.
  std::lock_guard<SubmitMutex> lock(engine_.mutex());
  std::unordered_map<const Stream*, std::vector<const Instruction*>> by_stream;
  for (const InstrRef& ref : engine_.in_flight()) {
    if (!ref->done_.load(std::memory_order_seq_cst)) by_stream[ref->stream()].push_back(ref.get());
  }
  std::vector<const Instruction*> todo = {waited};
  std::unordered_map<const Instruction*, bool> seen;
  // Per stream, the highest id whose predecessors on that stream were already queued.
  std::unordered_map<const Stream*, uint64_t> stream_done_up_to;
  while (!todo.empty()) {
    const Instruction* p = todo.back();
    todo.pop_back();
    if (p->done_.load(std::memory_order_seq_cst) || !seen.emplace(p, true).second) continue;
    if (p->stream() == running->stream() && p->id() >= running->id()) return true;
    for (const InstrRef& w : p->wait_for) todo.push_back(w.get());
    uint64_t& up_to = stream_done_up_to[p->stream()];
    if (p->id() > up_to) {
      for (const Instruction* q : by_stream[p->stream()]) {
        if (q->id() >= up_to && q->id() < p->id()) todo.push_back(q);
      }
      up_to = p->id();
    }
  }
  return false;
}

void VirtualMachine::CheckCanWait(const Instruction* waited, const char* caller) {
  const Instruction* running = RunningInstruction();
  if (running == nullptr || waited->done() || !WaitsForQueuedWork(waited, running)) return;
  const std::string what = caller != nullptr ? caller : waited->policy()->op_name();
  throw Error(
      what + ": cannot wait from inside a callback running on " + running->stream()->name() + " (" +
      Describe(running) + "): the awaited " + Describe(waited) +
      (waited->stream() == running->stream() ? " is queued behind it"
                                             : " waits for work queued behind it (or for it)") +
      "; read results back outside the callback, or from another thread");
}

void VirtualMachine::SetWaitTimeout(double seconds) {
  const double ns = seconds * 1e9;
  wait_timeout_ns_.store(!(ns > 0)   ? 0
                         : ns > 9e18 ? INT64_MAX
                                     : static_cast<int64_t>(ns),
                         std::memory_order_relaxed);
}

double VirtualMachine::wait_timeout() const {
  return static_cast<double>(wait_timeout_ns_.load(std::memory_order_relaxed)) / 1e9;
}

void VirtualMachine::Wait(Instruction* instr, const char* caller) {
  CheckCanWait(instr, caller);
  if (instr->done()) return;
  WaitHookScope hooks;
  WaitDoneOrReport(instr);
}

void VirtualMachine::ThrowIfFailed(Instruction* instr) {
  const VmErrorPtr& err = instr->error();
  if (!err) return;
  err->reported.store(true);
  err->Throw();
}

void VirtualMachine::WaitForAllIssued(const char* caller) {
  if (shut_down_.load()) return;  // nothing runs any more: there is nothing to wait for
  if (const Instruction* running = RunningInstruction()) {
    throw Error(std::string(caller) + ": cannot wait from inside a callback running on " +
                running->stream()->name() + " (" + Describe(running) +
                "): it would wait for itself and for everything queued behind it");
  }
  // After shutdown, Submit marks the barriers done at once (nothing more will run).
  SmallObjectVector<InstrRef> barriers;
  for (Stream* s : devices_.streams()) {
    barriers.emplace_back(new Instruction(0, s, std::make_unique<BarrierPolicy>()));
  }
  SmallObjectVector<InstrRef> batch = barriers;
  Submit(batch);
  WaitHookScope hooks;
  for (const InstrRef& b : barriers) WaitDoneOrReport(b.get());
}

void VirtualMachine::Sync() {
  if (closing_.load(std::memory_order_relaxed)) OnClosing("sync", /*throw_if_shut_down=*/true);
  WaitForAllIssued("sync");
  engine_.ReapAll();
  errors_.ThrowFirstUnreported();
}

}  // namespace ofl::vm
