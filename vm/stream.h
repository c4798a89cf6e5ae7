// Stream: one ordered queue of instructions on a device, served by its own worker thread, and the
// backend's native stream that the worker launches device work on. Instructions are pushed in issue
// order (the VM's submit lock makes the producer side single at any moment) and launched in that
// order; a cross-stream predecessor is waited for at the head of the queue (on the device through
// an event when both are on one asynchronous device, on the host otherwise). Because issue order is
// a total order that agrees with every queue and every dependence edge, this can never deadlock.
//
// On an asynchronous backend an instruction is *launched* when the worker returns from it and
// *complete* when the event recorded after it completes. The stream keeps its launched,
// incomplete instructions in launch order (events on one stream complete in that order) and
// finishes them as their events complete. Its completion thread blocks on the device for the
// oldest of them (synchronize_event), so a completion is observed as it happens without a core
// spent polling; the worker also polls after each launch, and a thread that waits for one
// instruction blocks on that instruction's event itself (SyncAndPoll). See vm/THREADING.md for the
// whole set of rules.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"
#include "vm/allocator/caching_allocator.h"
#include "vm/completion_policy.h"

namespace ofl::vm {

class Instruction;
class VirtualMachine;

// kCompute runs ops; kHost2Device and kDevice2Host the copies between host and device memory.
// kAux is a side stream of the device that no op uses: work given to it by hand (a callback, a
// copy) runs beside the compute stream rather than queued behind it (the trace tool's fan-out
// workload; the tests of cross-stream dependences, poisoning and inline runs).
// kCollective: the stream that runs a process's collectives (global tensors' boxing) in issue
// order, so every rank calls them in the same order.
enum class StreamRole { kCompute, kHost2Device, kDevice2Host, kAux, kCollective };
inline constexpr int kNumStreamRoles = 5;
std::string to_string(StreamRole role);

class Stream {
 public:
  // The ring never fills: the VM's high-water mark keeps in-flight instructions below this.
  static constexpr size_t kRingCapacity = size_t{1} << 17;

  // Creates the backend's native stream (its errors propagate) and starts the worker.
  Stream(VirtualMachine* vm, Device device, StreamRole role, CachingAllocator* pool,
         DeviceBackend* backend);
  ~Stream();  // Stop()

  // Stops the worker after it drained its queue, waits for its launched work to complete, then
  // destroys its events and its native stream. Idempotent; not concurrent with Push.
  void Stop();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const std::string& name() const { return name_; }
  const Device& device() const { return device_; }
  StreamRole role() const { return role_; }
  CachingAllocator* pool() const { return pool_; }
  DeviceBackend* backend() const { return backend_; }
  NativeStream native() const { return native_; }
  // How this stream's work completes (vm/completion_policy.h): the backend's synchronous() picks
  // HostCompletion or DeviceCompletion.
  const CompletionPolicy& completion() const { return *completion_; }
  // completion().complete_at_return(), one load for the per-op paths (direct runs and reads,
  // allocation at issue).
  bool complete_at_return() const { return !async_; }
  int index() const { return index_; }
  void set_index(int i) { index_ = i; }

  // Producer side; the caller holds the VM's submit lock.
  void Push(Instruction* instr);
  // Inline runs (synchronous streams only; see vm/THREADING.md, "Inline runs"). Claim: the caller
  // holds the submit lock; succeeds when every instruction pushed so far has finished running and
  // no other inline run holds the stream. The claimer then runs one instruction itself and calls
  // EndInline; meanwhile the worker runs nothing, so the stream's order holds.
  bool TryClaimInline();
  void EndInline() { inline_claim_.store(false, std::memory_order_release); }
  // Every instruction pushed so far has finished running on the worker.
  bool idle() const {
    return retired_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire);
  }

  // Asynchronous streams only. Called by this stream's worker right after it launched `instr`:
  // records the instruction's completion event and keeps it until the event completes.
  void TrackLaunched(Instruction* instr);
  // Finishes (VirtualMachine::Finish) every tracked instruction whose event completed, in launch
  // order, without blocking on the device. Any thread. Returns whether some are still incomplete.
  bool PollCompletions();
  // Blocks the calling thread on the device (synchronize_event) until the event of `instr`, an
  // instruction launched on this stream and kept alive by the caller, completed, then polls. A
  // fault the device reports there fails this stream's pending work, as a faulting query does. Any
  // thread; returns at once when instr is done already.
  void SyncAndPoll(Instruction* instr);
  int64_t incomplete() const { return incomplete_.load(std::memory_order_acquire); }
  // Completion events are reused: an instruction returns its event when it is destroyed.
  void RecycleEvent(NativeEvent event);

 private:
  void WorkerLoop();
  // The completion thread of an asynchronous stream: waits for the oldest pending instruction's
  // cross-stream predecessors to finish, blocks on its event, finishes it (and whatever else
  // completed), and sleeps while nothing is pending. Returns once stopped with nothing pending.
  void CompletionLoop();
  // Fails every pending instruction with the fault `e` the device reported; holds pending_mu_.
  void FailPendingLocked(const std::exception& e);
  NativeEvent TakeEvent();

  VirtualMachine* vm_;
  Device device_;
  StreamRole role_;
  CachingAllocator* pool_;
  DeviceBackend* backend_;
  NativeStream native_ = nullptr;
  bool async_ = false;  // the stream's own machinery: the completion thread, no inline runs
  const CompletionPolicy* completion_;
  std::string name_;
  int index_ = 0;

  std::vector<Instruction*> ring_;
  alignas(64) std::atomic<uint64_t> head_{0};  // next slot the worker reads
  std::atomic<uint64_t> retired_{0};           // slots whose instruction the worker has run
  alignas(64) std::atomic<uint64_t> tail_{0};  // next slot the producer writes
  uint64_t head_seen_ =
      0;  // the producer's last read of head_ (re-read only when the ring looks full)
  alignas(64) std::atomic<bool> sleeping_{false};
  // Set while an issuing thread runs an instruction of this stream inline (TryClaimInline).
  std::atomic<bool> inline_claim_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread worker_;
  bool stopped_ = false;

  // Launched, incomplete instructions in launch order (asynchronous streams only).
  std::mutex pending_mu_;
  std::deque<Instruction*> pending_;
  std::atomic<int64_t> incomplete_{0};
  // The instructions threads are waiting for inside SyncAndPoll, one entry a thread, kept until
  // the thread has failed the work with a fault it took (guarded by pending_mu_): PollCompletions
  // does not finish them (their waiters poll afterwards).
  std::vector<Instruction*> syncing_;
  // The completion thread (asynchronous streams only) sleeps on pending_cv_ while pending_ is
  // empty; both flags are guarded by pending_mu_.
  std::condition_variable pending_cv_;
  bool completer_idle_ = false;
  bool completer_stop_ = false;
  std::thread completer_;
  std::mutex events_mu_;
  std::vector<NativeEvent> free_events_;
};

}  // namespace ofl::vm
