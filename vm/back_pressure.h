// The VM's back-pressure: how many instructions are in flight (submitted, not yet completed), the
// most there were at once, and the water marks that hold submitters back: a submission that finds
// `high` or more in flight waits until at most `low` are (VirtualMachine::WaitForCapacity does the
// waiting, with the VM's progress wait and hang report). Submitters count under the VM's submit
// lock, workers count completions; each counter is written by one side only and lives on its own
// cache line, so the per-op path does not bounce a shared counter between the issuing core and
// the worker's (vm/THREADING.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ofl::vm {

class BackPressure {
 public:
  // Throws InvalidArgument (naming set_water_marks and both values) unless
  // 0 < low < high <= kMaxHighWater.
  static void CheckMarks(int64_t high, int64_t low);
  // Checked marks; the caller wakes the submitters that wait, to re-check against them.
  void SetMarks(int64_t high, int64_t low) {
    high_water_.store(high, std::memory_order_relaxed);
    low_water_.store(low, std::memory_order_relaxed);
  }

  // A submitter, under the submit lock: one more instruction in flight (and a new peak when the
  // cheap estimate says there may be one).
  void CountSubmitted() {
    const int64_t submitted = submitted_.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (submitted - completed_seen_.load(std::memory_order_relaxed) >
        peak_.load(std::memory_order_relaxed)) {
      const int64_t completed = completed_.load(std::memory_order_relaxed);
      completed_seen_.store(completed, std::memory_order_relaxed);
      if (submitted - completed > peak_.load(std::memory_order_relaxed)) {
        peak_.store(submitted - completed, std::memory_order_relaxed);
      }
    }
  }
  // A worker: one instruction completed.
  void CountCompleted() { completed_.fetch_add(1, std::memory_order_relaxed); }

  // In flight now (reads the workers' counter).
  int64_t Pending() const {
    return submitted_.load(std::memory_order_seq_cst) - completed_.load(std::memory_order_seq_cst);
  }
  // An upper bound on what is in flight, without reading the workers' counter.
  int64_t PendingBound() const {
    return submitted_.load(std::memory_order_relaxed) -
           completed_seen_.load(std::memory_order_relaxed);
  }
  // Completed since the VM started.
  uint64_t Completed() const {
    return static_cast<uint64_t>(completed_.load(std::memory_order_seq_cst));
  }
  // Whether a submitter must wait: the cheap estimate, then the exact count, is at the high-water
  // mark or above.
  bool Full() {
    const int64_t high = high_water_.load(std::memory_order_relaxed);
    if (PendingBound() < high) return false;
    completed_seen_.store(completed_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return Pending() >= high;
  }
  // Whether a waiting submitter may go on.
  bool Eased() const { return Pending() <= low_water_.load(std::memory_order_relaxed); }

  // The most instructions in flight at once since the start or the last ResetPeak.
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  void ResetPeak() { peak_.store(Pending()); }

  // "N instruction(s) in flight, high-water mark H, resumes at L", for the hang report.
  std::string Describe() const;

 private:
  alignas(64) std::atomic<int64_t> submitted_{0};
  // The completed count the submitters last read; refreshed only when the cheap estimate
  // submitted_ - completed_seen_ says the water mark or the peak may have been crossed.
  std::atomic<int64_t> completed_seen_{0};
  std::atomic<int64_t> peak_{0};
  alignas(64) std::atomic<int64_t> completed_{0};
  // Changed at run time by SetMarks while submitters read them; on a line of their own, not
  // completed_'s, which the workers write.
  alignas(64) std::atomic<int64_t> high_water_{0};
  std::atomic<int64_t> low_water_{0};
};

}  // namespace ofl::vm
