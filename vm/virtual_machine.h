// VirtualMachine: the process-wide scheduler. It orders submitted instructions by the blobs they
// read and write, hands each to its stream's worker, keeps errors raised inside the VM until a wait
// re-throws them, applies back-pressure to submitters, and owns the streams and caching pools.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "vm/allocator/caching_allocator.h"
#include "vm/instruction.h"
#include "vm/stream.h"
#include "vm/trace.h"

namespace ofl::vm {

// Policies of retired instructions, destroyed only after the submit lock is released (a policy may
// hold the last handle of a tensor, and that tensor's death submits a ReleaseTensor). Most reaps
// retire a handful, so they fit inline and cost no allocation.
class Graveyard {
 public:
  void Add(std::unique_ptr<InstructionPolicy> p) {
    if (n_ < kInline) {
      inline_[n_++] = std::move(p);
    } else {
      overflow_.push_back(std::move(p));
    }
  }

 private:
  static constexpr size_t kInline = 16;
  std::unique_ptr<InstructionPolicy> inline_[kInline];
  size_t n_ = 0;
  std::vector<std::unique_ptr<InstructionPolicy>> overflow_;
};

class VirtualMachine {
 public:
  // The singleton is never destroyed (work may still be in flight at exit); an exit hook drains
  // what can finish and then stops accepting work.
  static VirtualMachine& Get();

  // Throws DeviceError for a device this build or machine cannot use.
  Stream* GetStream(const Device& device, StreamRole role = StreamRole::kCompute);
  CachingAllocator* GetAllocator(const Device& device);
  std::vector<Stream*> streams();

  // Orders and dispatches a batch built by an InstructionsBuilder. Blocks while more than the
  // high-water mark of instructions are in flight, until they drop to the low-water mark.
  void Submit(FastVector<InstrRef>& batch);
  // A tensor's storage died: return its blob's block to the pool after every instruction using it.
  // When those are all done, the block is freed at once; when they all sit on one stream, the free
  // is folded into the last of them (no instruction of its own, as MegEngine folds a delete into
  // the op before it); otherwise a ReleaseTensor instruction is issued.
  void Release(BlobPtr blob);

  // Blocks until the instruction is done. Does not throw.
  void Wait(Instruction* instr);
  // Waits for every instruction issued before the call, then re-throws the first error raised
  // inside the VM that no wait has reported yet.
  void Sync();
  // Re-throws instr's error if it has one, marking it reported.
  void ThrowIfFailed(Instruction* instr);

  // Called by stream workers.
  void Run(Instruction* instr);

  uint64_t NewBlobId() { return next_blob_id_.fetch_add(1, std::memory_order_relaxed); }
  bool sync_mode() const { return sync_mode_; }
  int64_t spin_ns() const { return spin_ns_; }

  // Back-pressure marks (in-flight instructions). high > low > 0.
  void SetWaterMarks(int64_t high, int64_t low);
  int64_t in_flight() const { return pending_.load(std::memory_order_relaxed); }
  int64_t peak_in_flight() const { return peak_pending_.load(std::memory_order_relaxed); }
  void ResetPeakInFlight() { peak_pending_.store(in_flight()); }

  // Tracing: while on, each finished instruction leaves a TraceRecord.
  void SetTracing(bool on);
  bool tracing() const { return tracing_.load(std::memory_order_relaxed); }
  std::vector<TraceRecord> TakeTrace();

  // Drains what can finish (until nothing progresses for a while) and refuses further work.
  void Shutdown();
  bool shut_down() const { return shut_down_.load(); }

 private:
  VirtualMachine();
  void Connect(Instruction* instr, const InstrRef& pred);
  void ConsumeDependences(Instruction* instr);
  void Complete(Instruction* instr);
  void WaitDone(Instruction* instr);
  // Retires finished instructions from the front of in_flight_ (all finished ones when `all`).
  // Their policies are moved to `graveyard`, to be destroyed after the submit lock is released:
  // a policy may hold the last handle of a tensor, whose death submits a ReleaseTensor.
  void Reap(bool all, Graveyard* graveyard);
  void RecordError(const VmErrorPtr& err);
  void WaitForCapacity();

  std::mutex submit_mu_;  // orders submissions; guards dependences and in_flight_
  std::deque<InstrRef, FastAllocator<InstrRef>> in_flight_;
  std::atomic<uint64_t> next_instr_id_{1};
  std::atomic<uint64_t> next_blob_id_{1};
  alignas(64) std::atomic<int64_t> pending_{0};
  std::atomic<int64_t> peak_pending_{0};
  // Changed at run time by SetWaterMarks while submitters read them.
  std::atomic<int64_t> high_water_{0};
  std::atomic<int64_t> low_water_{0};

  // Completion wake-ups for waiters that stopped spinning.
  alignas(64) std::atomic<int32_t> waiters_{0};
  std::mutex done_mu_;
  std::condition_variable done_cv_;

  std::mutex errors_mu_;
  std::vector<VmErrorPtr> unreported_;

  std::mutex streams_mu_;
  std::map<std::pair<std::string, int>, std::unique_ptr<Stream>> streams_;
  std::map<std::string, std::unique_ptr<CachingAllocator>> pools_;
  std::vector<Stream*> stream_list_;
  // Lock-free look-up of already created streams: [device type][device index][role].
  static constexpr int kMaxFastDeviceIndex = 16;
  std::atomic<Stream*> fast_streams_[2][kMaxFastDeviceIndex][4] = {};

  std::atomic<bool> tracing_{false};
  std::mutex trace_mu_;
  std::vector<TraceRecord> trace_;

  bool sync_mode_ = false;
  bool fold_releases_ = true;
  int64_t spin_ns_ = 50000;
  std::atomic<bool> shut_down_{false};
};

}  // namespace ofl::vm
