// The VirtualMachine's end: the exit hook (drain, then write the OFL_TRACE file), Shutdown, and
// what a call finds once the runtime is closing (OnClosing, ThrowShutDown).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

#include <pthread.h>
#include <unistd.h>

#include "vm/chrome_trace.h"
#include "vm/log.h"
#include "vm/process_group_hooks.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

namespace {
ProcessGroupHooks process_group_hooks;

// This process's rank and the number of ranks: the process group's once init_distributed ran,
// else what mpiexec tells every process it starts (Open MPI's variables, then MPICH's), so that
// ranks that never called init_distributed still write files of their own.
std::pair<int, int> RankAndWorld() {
  const ProcessGroupHooks& group = process_group_hooks;
  if (group.world_size != nullptr && group.world_size() > 1) {
    return {group.world_rank(), group.world_size()};
  }
  const std::pair<const char*, const char*> vars[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}};
  for (const auto& [rank_var, size_var] : vars) {
    const char* rank = std::getenv(rank_var);
    const char* size = std::getenv(size_var);
    if (rank == nullptr || size == nullptr) continue;
    const int r = std::atoi(rank), n = std::atoi(size);
    if (r >= 0 && r < n && n > 1) return {r, n};
  }
  return {0, 1};
}

// The VM, for the fork handler (set once it is made; read in a fork child, where no lock is safe).
std::atomic<VirtualMachine*> fork_vm{nullptr};
// Set on the thread that runs the exit hook (std::exit, or returning from main). Trivially
// destructible, so it stays readable after the thread's thread_locals were destroyed.
thread_local bool exiting_thread = false;
}  // namespace

void SetProcessGroupHooks(const ProcessGroupHooks& hooks) { process_group_hooks = hooks; }
const ProcessGroupHooks& GetProcessGroupHooks() { return process_group_hooks; }

void VirtualMachine::RegisterForkHandler(VirtualMachine* vm) {
  fork_vm.store(vm, std::memory_order_release);
  pthread_atfork(nullptr, nullptr, &VirtualMachine::AtForkChild);
}

void VirtualMachine::AtForkChild() {
  VirtualMachine* vm = fork_vm.load(std::memory_order_acquire);
  // No thread started yet: nothing is missing in the child, whose runtime starts its own.
  if (vm == nullptr || !vm->devices_.threads_started()) return;
  vm->forked_.store(true);
  vm->closing_.store(true);
}

void VirtualMachine::ThrowShutDown(const std::string& what) {
  if (Get().forked()) {
    throw Error(what + ": oneflow_lite cannot be used in a forked child process (pid " +
                std::to_string(getpid()) +
                "): its parent had started the runtime's threads, which fork() does not copy. Use "
                "the runtime in the parent only, or start the child with exec (posix_spawn)");
  }
  throw Error(what +
              ": the runtime was shut down (ofl::shutdown or process exit); no more work "
              "can be issued");
}

bool VirtualMachine::ParksWhileExiting() const {
  return exiting_.load() && !exiting_thread && RunningInstruction() == nullptr;
}

void VirtualMachine::OnClosing(const std::string& what, bool throw_if_shut_down) {
  if (forked_.load()) ThrowShutDown(what);
  if (ParksWhileExiting()) {
    // std::exit runs on another thread. Throwing here would end the process with an exception
    // escaping this thread (abort) instead of the exit status; returning would run work on a
    // runtime that is shutting down. This thread waits, holding none of the VM's locks, until
    // the exit ends the process.
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (throw_if_shut_down && shut_down_.load()) ThrowShutDown(what);
}

void VirtualMachine::AtExit() {
  VirtualMachine& vm = Get();
  // A fork child of a process whose runtime had started: no worker exists here to drain or stop,
  // and the parent's pools are not this process's to return.
  if (vm.forked_.load()) return;
  exiting_thread = true;
  vm.exiting_.store(true);  // from here on, other threads' new work parks them (OnClosing)
  vm.closing_.store(true);
  vm.Shutdown();
  if (vm.tracer_.trace_path().empty() || !vm.tracing()) return;
  const auto [rank, world] = RankAndWorld();
  const std::string path = PerRankTracePath(vm.tracer_.trace_path(), rank, world);
  try {
    const TraceSession session = vm.StopTraceSession();
    WriteChromeTrace(path, session);
    Logger().info("trace: wrote {} instruction(s) to {}", session.records.size(), path);
  } catch (const std::exception& e) {
    Logger().error("OFL_TRACE: {}", e.what());
  }
}

bool VirtualMachine::DrainWhileProgressing(int64_t stall_ns) {
  int64_t last = pressure_.Pending();
  int64_t last_change = NowNs();
  while (last > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const int64_t now = pressure_.Pending();
    if (now != last) {
      last = now;
      last_change = NowNs();
    } else if (stall_ns > 0 && NowNs() - last_change > stall_ns) {
      return false;
    }
  }
  return true;
}

void VirtualMachine::Shutdown() {
  if (forked_.load()) return;  // see AtExit
  // Let queued work finish while it makes progress; give up on work that is stuck (a callback
  // waiting for something that will never come) so that exit never hangs.
  const bool drained = DrainWhileProgressing(exit_stall_ns_.load());
  if (!drained) {
    Logger().warn("exiting with {} instruction(s) still in flight that made no progress",
                  pressure_.Pending());
  }
  closing_.store(true);  // before shut_down_: whoever sees the flag also takes the slow paths
  if (shut_down_.exchange(true)) return;  // a second call (the exit hook after ofl::shutdown)
  // A direct run (TryRunOpDirect) holds the submit lock while it runs and checks the flag under
  // it: once this lock was taken, none is running and none will start.
  { std::lock_guard<SubmitMutex> lock(engine_.mutex()); }
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    done_cv_.notify_all();
  }
  if (!drained) return;  // a stuck worker cannot be joined: leave the streams to the process exit
  // Workers first (each waits for its launched device work), then the pools: no worker can free
  // into a closed pool, and no device memory goes back while the device may still use it. Last,
  // the backends' own state stays (a CUDA runtime or MPI tears itself down after this).
  std::vector<Stream*> all = devices_.streams();
  for (Stream* s : all) {
    try {
      s->Stop();
    } catch (const std::exception& e) {
      Logger().warn("shutdown: stopping {} failed: {}", s->name(), e.what());
    }
  }
  std::unique_lock<std::mutex> lock = devices_.ClosePools(exiting_);
  // Last: MPI (finalised only if init_distributed initialised it), after every collective ran.
  try {
    if (process_group_hooks.finalize != nullptr) process_group_hooks.finalize();
  } catch (const std::exception& e) {
    Logger().warn("shutdown: finalising the process group failed: {}", e.what());
  }
}

}  // namespace ofl::vm
