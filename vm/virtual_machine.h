// VirtualMachine: the process-wide scheduler. Its engine (vm_engine.h) orders submitted
// instructions by the blobs they read and write and dispatches each to its stream or an inline
// run; the VirtualMachine owns the threads and streams around it: the device registry (streams,
// workers, caching pools, failed devices), the workers' run protocol and completion (each
// stream's CompletionPolicy says how its work completes: completion_policy.h), the waits and
// their hang reports, the errors raised inside the VM until a wait re-throws them, back-pressure
// on submitters (the counters and water marks: back_pressure.h), tracing, exit and shutdown.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "vm/allocator/caching_allocator.h"
#include "vm/back_pressure.h"
#include "vm/device_registry.h"
#include "vm/error_store.h"
#include "vm/instruction.h"
#include "vm/stream.h"
#include "vm/trace.h"
#include "vm/vm_engine.h"
#include "vm/vm_tracer.h"

namespace ofl::vm {

class VirtualMachine {
 public:
  // The singleton is never destroyed (work may still be in flight at exit); an exit hook drains
  // what can finish and then stops accepting work.
  static VirtualMachine& Get();

  // The streams, pools and failed devices.
  DeviceRegistry& devices() { return devices_; }

  // Orders and dispatches a batch built by an InstructionsBuilder. With back_pressure, blocks
  // while more than the high-water mark of instructions are in flight, until they drop to the
  // low-water mark, and throws ofl::Error with a hang report (nothing submitted) when no
  // instruction completed anywhere for the wait timeout meanwhile. A VM worker (a callback or
  // kernel issuing work) never blocks here: what it would wait for may be queued behind itself.
  void Submit(SmallObjectVector<InstrRef>& batch, bool back_pressure = true);
  // A tensor's storage died: return its blob's block to the pool after every instruction using it.
  // When those are all done, the block is freed at once; when they all sit on one stream, the free
  // is folded into the last of them (no instruction of its own, as MegEngine folds a delete into
  // the op before it); otherwise a ReleaseTensor instruction is issued. Called from destructors:
  // never throws and never waits (not even in OFL_VM_SYNC=1 mode, nor for back-pressure); an
  // error is kept for the next wait like any error raised inside the VM.
  void Release(BlobPtr blob) noexcept;

  // Gives a new blob (no instruction has used it) its memory on the calling thread, from a cached
  // block of its device's pool, when that is safe and cannot fail: a synchronous device, tracing
  // off (a trace wants the allocating instruction). Returns false when the caller must issue an
  // instruction that allocates instead (its errors, out-of-memory included, then surface at the
  // next wait as for any op).
  bool AllocateAtIssue(EagerBlobObject* blob, const char* owner);

  // Runs an op call right here, with no instruction, when that is indistinguishable from issuing
  // it (vm/THREADING.md, "Direct runs"): a built-in kernel, small operands, an idle synchronous
  // stream, operands that no unfinished instruction touches, outputs served from cached blocks.
  // Returns false when the caller must issue it as an instruction instead (outputs it gave memory
  // keep it); a kernel that throws here also returns false, so that the instruction reports it.
  bool TryRunOpDirect(const std::string& op_name, kernels::KernelFn kernel,
                      OpCallPolicy::Operands inputs, OpCallPolicy::Operands outputs,
                      const Attrs& attrs, Stream* stream);

  // Reads a blob's view on the calling thread with no instruction, when that is indistinguishable
  // from an AccessBlobByCallback read (vm/THREADING.md, "Direct reads"): a synchronous
  // host-accessible producer that finished, no error, within OFL_VM_INLINE_BYTES. Calls
  // read(view, context) under the submit lock; `read` must not call into the VM. Returns false
  // (having called nothing) when the caller must issue the read as an instruction.
  using DirectReadFn = void (*)(const kernels::TensorArg& view, void* context);
  bool TryReadDirect(const BlobArg& arg, DirectReadFn read, void* context);
  // True when every instruction that writes the blob is complete (its writes visible to the
  // caller), it has memory and no error, the runtime is not closing and the caller is not a VM
  // worker: then Tensor::data_ptr need not wait (vm/THREADING.md, "Direct reads"). False means
  // "issue a read and wait for it", which also reports errors. Takes the submit lock briefly.
  bool WritesFinished(EagerBlobObject* blob);
  // The stream of the blob's last writer while that writer is not finished, else null: a read
  // may then be queued behind it on its own stream. A hint only (another thread may issue a
  // write right after); the read's dependences keep it right whichever stream it goes to. Takes
  // the submit lock briefly.
  Stream* UnfinishedWriterStream(EagerBlobObject* blob);

  // Blocks until the instruction is done. Does not re-throw the instruction's error; throws
  // ofl::Error with a hang report (every pending instruction and what it waits for) when no
  // instruction completed anywhere in the VM for the wait timeout. The instruction is then
  // abandoned: if no worker has started it yet, it never runs (its writes are poisoned). One that
  // started and touches the caller's memory (TouchesCallerMemory) is waited for to the end instead,
  // so the caller never gets control back while a copy into or out of its memory runs.
  // On a VM worker (inside a callback or kernel) it throws ofl::Error naming `caller` and the
  // worker's stream when `instr` waits, directly or through other instructions and streams, for
  // the running instruction or for anything queued behind it on its stream: that wait would never
  // end. Other waits from a worker are allowed.
  void Wait(Instruction* instr, const char* caller = nullptr);
  // Waits for every instruction issued before the call, then re-throws the first error raised
  // inside the VM that no wait has reported yet. Throws a hang report like Wait. Throws ofl::Error
  // on a VM worker (the barriers it waits for queue behind the running instruction).
  void Sync();
  // The instruction this thread is running as a VM worker (nullptr on any other thread).
  static Instruction* RunningInstruction();
  // The hang timeout of Wait and Sync, from OFL_VM_TIMEOUT_SECONDS (default 300; tests change it
  // through VmTesting). <= 0 waits forever.
  double wait_timeout() const;
  // Waits while instructions are in flight and some of them finish: true once none is left,
  // false once none finished for `stall_ns` (<= 0: waits until none is left). The exit drain, and
  // MPI_Finalize's wait for the collectives issued before it.
  bool DrainWhileProgressing(int64_t stall_ns);
  // Re-throws instr's error if it has one, marking it reported.
  void ThrowIfFailed(Instruction* instr);

  // Called by stream workers: waits for the instruction's cross-stream predecessors (on the
  // device when they are on the same asynchronous device, else until they are complete), then
  // launches it. On a synchronous stream it is complete at once (Finish); on an asynchronous one
  // its stream tracks its completion event.
  void Run(Instruction* instr);
  // The instruction is complete: frees the blobs folded into it, runs its policy's OnComplete and
  // publishes done. Called once, by whichever thread observed the completion.
  void Finish(Instruction* instr);
  // Frees the blobs folded into the instruction and runs its policy's OnComplete (once).
  void ReleaseBlocks(Instruction* instr);
  // Publishes "launched" (the instruction's completion event is recorded); wakes waiters.
  void PublishLaunched(Instruction* instr);
  // The device reported a fault for a launched instruction: it fails (its writes are poisoned and
  // the error is kept for the next wait) and is finished. `device_failed`: the device cannot
  // recover; every later op on it throws DeviceError naming this first fault.
  void FailLaunched(Instruction* instr, const std::string& what, bool device_failed);
  // Waits without a timeout until instr is complete: spins briefly, then waits for the device's
  // part as its stream's completion policy says (on an asynchronous stream it blocks on the device
  // for its event once it launched, Stream::SyncAndPoll), then on done_cv_. A worker waiting for
  // a predecessor on another device; a completion thread waiting for one on another stream of its
  // device. instr must be kept alive by the caller.
  void WaitFinished(Instruction* instr);
  // Waits without a timeout until instr launched (its worker returned from it).
  void WaitLaunched(Instruction* instr);
  // WaitLaunched in a wait that reports hangs: false when no instruction completed anywhere for
  // the hang timeout; throws WaitInterrupted when the program's interrupt hook says so.
  bool WaitLaunchedOrGiveUp(Instruction* instr);
  // Whether waits must stay interruptible (the program installed an `interrupted` hook, as the
  // Python package does for Ctrl-C): then no wait blocks in a backend call it cannot leave.
  static bool Interruptible();
  // Waits until every instruction launched so far on the device's streams completed (and the
  // blocks they freed are back in the pool). Any thread, including a worker.
  void DrainDevice(const Device& device);

  uint64_t NewBlobId() { return next_blob_id_.fetch_add(1, std::memory_order_relaxed); }
  bool sync_mode() const { return sync_mode_; }
  int64_t spin_ns() const { return spin_ns_; }
  // OFL_VM_INLINE_BYTES (see vm/THREADING.md, "Inline runs"); tests change it through VmTesting.
  int64_t inline_bytes() const { return inline_bytes_.load(std::memory_order_relaxed); }

  // Back-pressure marks (in-flight instructions): 0 < low < high <= kMaxHighWater (vm_config.h).
  void SetWaterMarks(int64_t high, int64_t low);
  int64_t in_flight() const { return pressure_.Pending(); }

  // Tracing: while on, each finished instruction leaves a TraceRecord and every pool reports its
  // allocations, frees and segment changes (PoolEventRecords). Off costs a branch per instruction.
  void SetTracing(bool on);
  bool tracing() const { return tracer_.tracing(); }
  std::vector<TraceRecord> TakeTrace();
  std::vector<PoolEventRecord> TakePoolEvents();
  // A trace session (ofl::trace::start / stop, OFL_TRACE=<path>). Start drops what was recorded
  // before and turns tracing on. Stop turns it off, waits for the work issued before (a hang or an
  // error inside the VM is left for the next wait to report), stops watching the pools and returns
  // everything recorded; instructions that had not finished are left out.
  void StartTraceSession();
  TraceSession StopTraceSession();

  // Drains what can finish (until nothing progresses for a while) and refuses further work: then,
  // if everything finished, stops every worker (each after its launched device work completed),
  // destroys the streams' events and native streams, and returns every pool's memory to its
  // backend. Idempotent (ofl::shutdown, then the exit hook). Streams and pools stay as objects, so
  // tensors that die later free into closed pools harmlessly; new work throws Error.
  void Shutdown();
  // Throws Error saying the runtime was shut down, naming `what` (or, in a forked child, that the
  // runtime cannot be used there).
  [[noreturn]] static void ThrowShutDown(const std::string& what);
  bool shut_down() const { return shut_down_.load(); }
  // This process is a fork() child of a process whose runtime had started its threads: every op,
  // read and sync throws Error at once, and exit skips the drain (vm/THREADING.md, "Exit and
  // fork").
  bool forked() const { return forked_.load(); }

 private:
  friend class VmTesting;  // the test-only switches and counters (vm/vm_testing.h)
  VirtualMachine();
  // The hang timeout of Wait and Sync, in seconds (VmTesting::SetWaitTimeout for tests).
  void SetWaitTimeout(double seconds);
  void Complete(Instruction* instr);
  // Waits without a timeout (a worker waiting for a cross-stream predecessor).
  void WaitDone(Instruction* instr);
  // Whether instr is done, after polling its stream when it launched on an asynchronous one.
  bool PolledDone(Instruction* instr);
  // Run's steps, in order.
  // Waits for instr's cross-stream predecessors: on the device when they are on the same
  // asynchronous device, else until they are complete.
  void WaitForPredecessors(Instruction* instr);
  // Stamps a traced instruction's ready and start times and names it as this worker's.
  void BeginTrace(Instruction* instr);
  // Claims the start (against AbandonAndReport) and returns the error that makes instr skip its
  // kernel: abandoned by a wait, its device failed, or a poisoned input. Null: it runs.
  VmErrorPtr PoisonOf(Instruction* instr);
  // Skips instr: its writes carry `poison`.
  void SkipPoisoned(Instruction* instr, const VmErrorPtr& poison, bool log_debug);
  // Runs the policy's Prepare and Compute; an exception fails instr.
  void Execute(Instruction* instr);
  // The kind an exception from Execute is kept as, with its message in *what; a fault the device
  // cannot recover from marks the device failed first.
  ErrorKind ClassifyError(Instruction* instr, const std::exception& e, std::string* what);
  // Stamps a traced instruction's end.
  void EndTrace(Instruction* instr);
  // Hands instr on: to its stream's completion tracking (asynchronous) or to Finish.
  void FinishRun(Instruction* instr, bool log_debug);
  // Poisons instr's writes with a new error and keeps it for the next wait.
  VmErrorPtr FailInstruction(Instruction* instr, ErrorKind kind, const std::string& what);
  // Waits with the hang timeout (Wait, Sync).
  void WaitDoneOrReport(Instruction* instr);
  // Instructions completed since the VM started.
  uint64_t CompletedCount();
  // Abandons `waited` unless a worker started it first (then `started` is set) and describes every
  // pending instruction; takes the submit lock.
  std::string AbandonAndReport(Instruction* waited, int64_t stalled_ns, bool* started);
  // Every pending instruction and what it waits for (`waited` marked); the caller holds the
  // engine's lock.
  std::string DescribePending(const Instruction* waited);
  // Throws when the calling thread is a VM worker that must not wait for `waited` (see Wait).
  void CheckCanWait(const Instruction* waited, const char* caller);
  // Whether `waited` transitively waits for `running` or for work queued behind it on its stream.
  bool WaitsForQueuedWork(const Instruction* waited, const Instruction* running);
  // Blocks on done_cv_ until ready() holds; returns false once a whole wait timeout passed with no
  // instruction completing anywhere (true at once when the timeout is off and ready() holds).
  template <class Ready>
  bool WaitWithProgress(Ready&& ready);
  // Submits a barrier per stream and waits for them (hang timeout; errors are not re-thrown).
  // `caller` names the call in the error thrown on a VM worker.
  void WaitForAllIssued(const char* caller);
  // The exit hook: drain, then write the OFL_TRACE file.
  static void AtExit();
  // Installs AtForkChild with pthread_atfork (once, when the VM is made).
  static void RegisterForkHandler(VirtualMachine* vm);
  // pthread_atfork's child handler: marks the child forked when the parent had started threads.
  static void AtForkChild();
  // An op, read or sync found closing_ set: in a forked child it throws; on a thread other than the
  // exiting one (and not a VM worker) while the process exits it parks the thread until the
  // process is gone; after a shutdown it throws when `throw_if_shut_down`. Otherwise (the exiting
  // thread or a worker, before the shutdown) it returns and the call goes on.
  void OnClosing(const std::string& what, bool throw_if_shut_down);
  // Whether the calling thread is parked when it issues work while the process exits.
  bool ParksWhileExiting() const;
  void WaitForCapacity();

  using SubmitMutex = VmEngine::Mutex;
  std::atomic<int64_t> direct_runs_{0};   // written under the engine's lock
  std::atomic<int64_t> direct_reads_{0};  // written under the engine's lock
  std::atomic<uint64_t> next_blob_id_{1};
  BackPressure pressure_;

  // Completion wake-ups for waiters that stopped spinning.
  alignas(64) std::atomic<int32_t> waiters_{0};
  std::mutex done_mu_;
  std::condition_variable done_cv_;

  ErrorStore errors_;

  DeviceRegistry devices_;

  VmTracer tracer_;

  // The dependence graph and dispatch (after pressure_ and tracer_, which it uses).
  VmEngine engine_{&pressure_, &tracer_};

  std::atomic<int64_t> wait_timeout_ns_{0};

  bool sync_mode_ = false;
  bool fold_releases_ = true;
  std::atomic<int64_t> inline_bytes_{0};
  int64_t spin_ns_ = 50000;
  std::atomic<int64_t> exit_stall_ns_{2000000000};
  std::atomic<bool> shut_down_{false};
  // Set with any of the three below: the one flag the per-op paths read (vm/THREADING.md, "Exit
  // and fork").
  std::atomic<bool> closing_{false};
  std::atomic<bool> exiting_{false};  // the exit hook started
  std::atomic<bool> forked_{false};   // this process is a fork child (see forked())
};

}  // namespace ofl::vm
