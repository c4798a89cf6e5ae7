// VmEngine: the VM's dependence graph and dispatch, apart from the threads and streams that run the
// work (VirtualMachine: the workers' run protocol, completion, waits, errors, shutdown). Under its
// one lock it numbers each submitted instruction, connects it to the instructions that last wrote
// and read its blobs (cross-stream predecessors become its wait_for list), keeps it in the
// in-flight list, and dispatches it: onto its stream's queue, or claimed for an inline run on the
// issuing thread. It retires finished instructions, and plans the free of a dead blob's block
// after its last users (vm/THREADING.md, "The submit lock").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include <oneapi/tbb/mutex.h>

#include "vm/back_pressure.h"
#include "vm/instruction.h"
#include "vm/vm_tracer.h"

namespace ofl::vm {

// Policies of retired instructions, destroyed only after the engine's lock is released (a policy
// may hold the last handle of a tensor, and that tensor's death submits a ReleaseTensor). Most
// reaps retire a handful, so they fit inline and cost no allocation.
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

// The instructions of a batch that the issuing thread runs itself once the engine's lock is
// released, in issue order (their streams are claimed for them). Batches are small; a few fit
// inline.
class InlineRuns {
 public:
  void Add(Instruction* instr) {
    if (n_ < kInline) {
      inline_[n_] = instr;
    } else {
      more_.push_back(instr);
    }
    ++n_;
  }
  size_t size() const { return n_; }
  Instruction* operator[](size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }

 private:
  static constexpr size_t kInline = 4;
  Instruction* inline_[kInline];
  size_t n_ = 0;
  SmallObjectVector<Instruction*> more_;
};

class VmEngine {
 public:
  // Orders submissions; guards every blob's Dependence and the in-flight list. oneTBB's mutex:
  // taken at least once per op, and uncontended it is an atomic exchange to lock and one to unlock.
  using Mutex = tbb::mutex;
  using InFlight = std::deque<InstrRef, SmallObjectAllocator<InstrRef>>;

  // `pressure` counts what is submitted (and bounds the reap); `tracer` records the traced
  // instructions retired. Both outlive the engine.
  VmEngine(BackPressure* pressure, VmTracer* tracer) : pressure_(pressure), tracer_(tracer) {}
  VmEngine(const VmEngine&) = delete;
  VmEngine& operator=(const VmEngine&) = delete;

  // How a batch is issued: by the same thread, so these hold for all of it.
  struct IssueContext {
    bool tracing = false;      // stamp the instructions for the trace
    int issue_thread = 0;      // TraceThreadIndex() of the issuing thread (tracing only)
    bool log_debug = false;    // log each instruction issued
    bool on_worker = false;    // the issuing thread is a VM worker: nothing runs inline
    int64_t inline_limit = 0;  // OFL_VM_INLINE_BYTES: the largest inline run (<= 0: none)
  };
  // Takes the lock and, for each instruction of the batch in order, numbers it, connects it to its
  // blobs' users, keeps it in flight and dispatches it: an instruction with no cross-stream
  // predecessor, small enough, whose stream is idle is claimed and added to `run_here` (the caller
  // runs it after the lock is released, then ends its stream's inline run); any other goes onto
  // its stream's queue. Then retires the finished instructions at the front of the list into
  // `graveyard`.
  void IssueAndDispatch(SmallObjectVector<InstrRef>& batch, const IssueContext& ctx,
                        InlineRuns* run_here, Graveyard* graveyard);

  // What becomes of a dead blob's block once its users are planned for (Release).
  enum class ReleasePlan {
    kFreeNow,  // no user is unfinished: the caller frees the block now
    kFolded,   // its users all sit on one stream: the last of them frees it when it completes
    kIssue,    // the caller issues a ReleaseTensor instruction ordered after its users
  };
  // Takes the lock, marks the blob dead when a user is unfinished, and plans the free: folded
  // into the last user when `fold` and every unfinished user is on one stream; kFreeNow when
  // nothing is unfinished and `free_when_done`. The blob's dependence is cleared unless the plan
  // is kIssue (the ReleaseTensor instruction consumes it).
  ReleasePlan PlanRelease(const BlobPtr& blob, bool fold, bool free_when_done);

  // Takes the lock and retires every finished instruction (their policies destroyed after it is
  // released): Sync, a trace's end, the exit drain.
  void ReapAll();

  Mutex& mutex() { return mu_; }
  // The instructions issued and not yet retired, in issue order. The caller holds mutex().
  const InFlight& in_flight() const { return in_flight_; }

 private:
  // Records pred as a predecessor of instr: for the trace (while tracing), and in wait_for when
  // it is on another stream and unfinished (the same stream's queue orders them already).
  void Connect(Instruction* instr, const InstrRef& pred);
  // Connects instr to the last writer (and, for a write, the readers) of each blob it uses, and
  // makes it their last writer or a reader.
  void ConsumeDependences(Instruction* instr);
  // Whether instr (its dependences consumed) may run inline, and if so claims its stream.
  bool ClaimInline(Instruction* instr, const IssueContext& ctx);
  // Drops the references that the blobs instr used keep to it (instr finished; lock held).
  void ForgetInDependences(Instruction* instr);
  // Retires finished instructions from the front of in_flight_ (all finished ones when `all`,
  // or when too many finished ones sit behind a slow one). Their policies are moved to
  // `graveyard`, to be destroyed after the lock is released.
  void Reap(bool all, Graveyard* graveyard);

  Mutex mu_;
  InFlight in_flight_;
  std::atomic<uint64_t> next_instr_id_{1};
  BackPressure* const pressure_;
  VmTracer* const tracer_;
};

}  // namespace ofl::vm
