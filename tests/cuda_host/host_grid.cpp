// The host grid's runtime: the emulated devices, memory, streams and events behind the shim's
// CUDA runtime calls, and the fiber scheduler that runs a launch's threads (host_grid.h).
#include "host_grid.h"

#include <cuda_runtime.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oneflow_lite/settings.h"

#if defined(__SANITIZE_ADDRESS__)
#define OFL_HOST_GRID_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OFL_HOST_GRID_ASAN 1
#endif
#endif
#if defined(OFL_HOST_GRID_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

struct CUstream_st {
  int device;
};
struct CUevent_st {
  int device;
};

namespace ofl::cuda_host {
namespace {

constexpr size_t kDeviceMemory = size_t{4} << 30;
constexpr size_t kStackBytes = 128 << 10;

struct Allocation {
  size_t bytes;
  int device;
};

struct DeviceState {
  int sms = 1;
  size_t used = 0;
  cudaError_t sticky = cudaSuccess;
};

// Everything shared between host threads, behind one lock. Never destroyed: VM workers may make
// calls while statics are destroyed at exit.
struct Runtime {
  std::mutex mu;
  std::vector<DeviceState> devices;
  std::map<uintptr_t, Allocation> device_memory;  // by start address
  std::set<void*> host_memory;
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
  std::set<std::pair<int, int>> peers;
  // An injected failure (FailCall): `skip` calls first do their work, then one returns `error`.
  struct Injected {
    cudaError_t error;
    int skip;
    bool record;
  };
  std::map<std::string, Injected> fail_next;
  std::map<std::string, uint64_t> calls;  // CallCount
  std::string diagnosis;
  Stats stats;
  uint64_t launch_seed = 0;
};

Runtime& Rt() {
  static Runtime* rt = [] {
    auto* r = new Runtime();
    const std::string spec = ofl::settings::String("OFL_CUDA_HOST_SMS");
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const int sms = std::atoi(item.c_str());
      if (sms <= 0) {
        std::fprintf(stderr, "host grid: OFL_CUDA_HOST_SMS=%s: '%s' is not a positive SM count\n",
                     spec.c_str(), item.c_str());
        std::abort();
      }
      r->devices.push_back(DeviceState{sms});
    }
    return r;
  }();
  return *rt;
}

std::atomic<int> g_wide{-1};

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local int t_device = 0;

cudaError_t SetLast(cudaError_t err) {
  if (err != cudaSuccess) t_last_error = err;
  return err;
}

void Diagnose(Runtime& rt, const std::string& what) { rt.diagnosis = what; }

// The prologue of every runtime call: an injected failure, then the current device's sticky error.
cudaError_t Begin(Runtime& rt, const char* call) {
  ++rt.calls[call];
  auto it = rt.fail_next.find(call);
  if (it != rt.fail_next.end() && it->second.skip > 0) {
    --it->second.skip;
  } else if (it != rt.fail_next.end()) {
    const Runtime::Injected injected = it->second;
    rt.fail_next.erase(it);
    return injected.record ? SetLast(injected.error) : injected.error;
  }
  if (t_device >= 0 && t_device < static_cast<int>(rt.devices.size()) &&
      rt.devices[t_device].sticky != cudaSuccess) {
    return SetLast(rt.devices[t_device].sticky);
  }
  return cudaSuccess;
}

bool ValidDevice(const Runtime& rt, int device) {
  return device >= 0 && device < static_cast<int>(rt.devices.size());
}

// The allocation holding [p, p + bytes), or null.
const Allocation* DeviceRange(const Runtime& rt, const void* p, size_t bytes) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = rt.device_memory.upper_bound(a);
  if (it == rt.device_memory.begin()) return nullptr;
  --it;
  if (a < it->first || a - it->first + bytes > it->second.bytes) return nullptr;
  return &it->second;
}

bool IsDevicePointer(const Runtime& rt, const void* p) { return DeviceRange(rt, p, 1) != nullptr; }

std::string Hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

// ---- the fiber scheduler ------------------------------------------------------------------------

// A fiber's saved context. On x86-64 it is just the stack pointer: the switch pushes the
// callee-saved registers, swaps stacks and pops the other side's (a launch makes a fiber per
// emulated thread, and ucontext's switches cost two system calls each: the signal mask). Elsewhere
// ucontext.
#if defined(__x86_64__)
extern "C" void ofl_host_grid_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .globl ofl_host_grid_switch
  .type ofl_host_grid_switch, @function
ofl_host_grid_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size ofl_host_grid_switch, .-ofl_host_grid_switch
)");

struct Context {
  void* sp = nullptr;
};

// A context that starts `entry` (which never returns) on the stack [stack, stack + bytes).
void MakeContext(Context* c, char* stack, size_t bytes, void (*entry)()) {
  auto* top =
      reinterpret_cast<uint64_t*>(reinterpret_cast<uintptr_t>(stack + bytes) & ~uintptr_t{15});
  top[-1] = 0;  // where entry's return address would be: entry sees the stack as after a call
  top[-2] = reinterpret_cast<uint64_t>(entry);  // popped by the switch's ret
  for (int k = 3; k <= 8; ++k) top[-k] = 0;     // the six callee-saved registers
  c->sp = top - 8;
}

void SwitchContext(Context* from, Context* to) { ofl_host_grid_switch(&from->sp, to->sp); }
#else
struct Context {
  ucontext_t uc;
};

void MakeContext(Context* c, char* stack, size_t bytes, void (*entry)()) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = bytes;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, entry, 0);
}

void SwitchContext(Context* from, Context* to) { swapcontext(&from->uc, &to->uc); }
#endif

enum class FiberState { kRunnable, kBarrier, kDone, kFaulted };

struct Fiber {
  Context context;
  FiberState state = FiberState::kRunnable;
  const char* file = nullptr;
  int line = 0;
  void* fake_stack = nullptr;
};

// One block's run on this host thread.
struct BlockRun {
  Context scheduler;
  std::vector<Fiber> fibers;
  const std::function<void()>* thread = nullptr;
  int current = -1;
  bool faulted = false;
  void* scheduler_fake_stack = nullptr;
  const void* scheduler_bottom = nullptr;
  size_t scheduler_size = 0;
};

thread_local BlockRun* t_run = nullptr;
thread_local std::vector<std::unique_ptr<char[]>> t_stacks;

void StartSwitch(void** fake_stack_save, const void* bottom, size_t size) {
#if defined(OFL_HOST_GRID_ASAN)
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
#else
  (void)fake_stack_save;
  (void)bottom;
  (void)size;
#endif
}

void FinishSwitch(void* fake_stack_save, const void** bottom_old, size_t* size_old) {
#if defined(OFL_HOST_GRID_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, size_old);
#else
  (void)fake_stack_save;
  (void)bottom_old;
  (void)size_old;
#endif
}

// Leaves the running fiber for the scheduler; returns when the scheduler resumes it (never when
// `final`).
void ToScheduler(BlockRun* run, bool final) {
  Fiber& f = run->fibers[run->current];
  StartSwitch(final ? nullptr : &f.fake_stack, run->scheduler_bottom, run->scheduler_size);
  SwitchContext(&f.context, &run->scheduler);
  FinishSwitch(f.fake_stack, nullptr, nullptr);
}

void FiberMain() {
  BlockRun* run = t_run;
  FinishSwitch(nullptr, &run->scheduler_bottom, &run->scheduler_size);
  (*run->thread)();
  run->fibers[run->current].state = FiberState::kDone;
  ToScheduler(run, true);
}

std::string ThreadName(const dim3& block_dim, int linear) {
  const unsigned x = linear % block_dim.x;
  const unsigned y = (linear / block_dim.x) % block_dim.y;
  const unsigned z = linear / (block_dim.x * block_dim.y);
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

std::string BlockName() {
  return "block (" + std::to_string(blockIdx.x) + "," + std::to_string(blockIdx.y) + "," +
         std::to_string(blockIdx.z) + ")";
}

void FaultLaunch(cudaError_t error, const std::string& what) {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (ValidDevice(rt, t_device) && rt.devices[t_device].sticky == cudaSuccess) {
    rt.devices[t_device].sticky = error;
  }
  Diagnose(rt, what);
  std::fprintf(stderr, "host grid: device fault on device %d: %s\n", t_device, what.c_str());
}

void SetBuiltins(const dim3& block_dim, int linear) {
  threadIdx.x = linear % block_dim.x;
  threadIdx.y = (linear / block_dim.x) % block_dim.y;
  threadIdx.z = linear / (block_dim.x * block_dim.y);
}

// Runs one block to its end; false after a fault (the fault is recorded).
bool RunBlock(BlockRun* run, const dim3& block_dim, std::mt19937_64& rng) {
  const int n = static_cast<int>(block_dim.x * block_dim.y * block_dim.z);
  while (static_cast<int>(t_stacks.size()) < n) {
    t_stacks.emplace_back(new char[kStackBytes]);
  }
  run->fibers.assign(n, Fiber());
  run->faulted = false;
  for (int i = 0; i < n; ++i) {
    Fiber& f = run->fibers[i];
    MakeContext(&f.context, t_stacks[i].get(), kStackBytes, &FiberMain);
  }
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  while (true) {
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order) {
      Fiber& f = run->fibers[i];
      if (f.state != FiberState::kRunnable) continue;
      SetBuiltins(block_dim, i);
      run->current = i;
      StartSwitch(&run->scheduler_fake_stack, t_stacks[i].get(), kStackBytes);
      SwitchContext(&run->scheduler, &f.context);
      FinishSwitch(run->scheduler_fake_stack, nullptr, nullptr);
      if (run->faulted) return false;
    }
    int done = -1;
    int waiting = -1;
    bool same_site = true;
    for (int i = 0; i < n; ++i) {
      const Fiber& f = run->fibers[i];
      if (f.state == FiberState::kDone && done < 0) done = i;
      if (f.state == FiberState::kBarrier) {
        if (waiting < 0) {
          waiting = i;
        } else if (f.line != run->fibers[waiting].line ||
                   std::string(f.file) != run->fibers[waiting].file) {
          same_site = false;
        }
      }
    }
    if (waiting < 0) return true;  // every thread returned
    const Fiber& w = run->fibers[waiting];
    const std::string site = std::string(w.file) + ":" + std::to_string(w.line);
    if (done >= 0) {
      FaultLaunch(cudaErrorLaunchFailure, "divergent __syncthreads in " + BlockName() +
                                              ": thread " + ThreadName(block_dim, done) +
                                              " returned while thread " +
                                              ThreadName(block_dim, waiting) + " waits at " + site);
      return false;
    }
    if (!same_site) {
      for (int i = 0; i < n; ++i) {
        const Fiber& f = run->fibers[i];
        if (f.line != w.line || std::string(f.file) != w.file) {
          FaultLaunch(cudaErrorLaunchFailure, "divergent __syncthreads in " + BlockName() +
                                                  ": thread " + ThreadName(block_dim, waiting) +
                                                  " waits at " + site + ", thread " +
                                                  ThreadName(block_dim, i) + " at " + f.file + ":" +
                                                  std::to_string(f.line));
          return false;
        }
      }
    }
    for (Fiber& f : run->fibers) f.state = FiberState::kRunnable;
    std::lock_guard<std::mutex> lock(Rt().mu);
    ++Rt().stats.barriers;
  }
}

std::string DimName(const dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

}  // namespace

// ---- faults and barriers, called from kernel code
// ------------------------------------------------

void DeviceFault(cudaError_t error, const char* what, const void* address) {
  BlockRun* run = t_run;
  {  // the message is destroyed before this fiber is abandoned below
    std::string msg = std::string(what) + " at " + Hex(address) + " is not 16-byte aligned";
    if (run == nullptr || run->current < 0) {
      std::fprintf(stderr, "host grid: %s outside a kernel\n", msg.c_str());
      std::abort();
    }
    msg += " (" + BlockName() + ", thread " + DimName(dim3(threadIdx.x, threadIdx.y, threadIdx.z)) +
           ")";
    FaultLaunch(error, msg);
  }
  run->faulted = true;
  run->fibers[run->current].state = FiberState::kFaulted;
  ToScheduler(run, true);
  std::abort();  // never resumed
}

void DeviceTrap() {
  BlockRun* run = t_run;
  if (run == nullptr || run->current < 0) {
    std::fprintf(stderr, "host grid: __trap() outside a kernel\n");
    std::abort();
  }
  FaultLaunch(cudaErrorLaunchFailure, "__trap() in " + BlockName() + ", thread " +
                                          DimName(dim3(threadIdx.x, threadIdx.y, threadIdx.z)));
  run->faulted = true;
  run->fibers[run->current].state = FiberState::kFaulted;
  ToScheduler(run, true);
  std::abort();  // never resumed
}

void SyncThreads(const char* file, int line) {
  BlockRun* run = t_run;
  if (run == nullptr || run->current < 0) {
    std::fprintf(stderr, "host grid: __syncthreads at %s:%d outside a kernel\n", file, line);
    std::abort();
  }
  Fiber& f = run->fibers[run->current];
  f.state = FiberState::kBarrier;
  f.file = file;
  f.line = line;
  ToScheduler(run, false);
}

// ---- launches
// ------------------------------------------------------------------------------------

void RunGrid(const dim3& grid, const dim3& block, size_t shared_bytes, cudaStream_t stream,
             const std::function<void()>& thread) {
  Runtime& rt = Rt();
  uint64_t seed = 0;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    if (Begin(rt, "cudaLaunchKernel") != cudaSuccess) return;
    const uint64_t threads = uint64_t{block.x} * block.y * block.z;
    if (block.x == 0 || block.y == 0 || block.z == 0 || block.x > 1024 || block.y > 1024 ||
        block.z > 64 || threads > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
        grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535 || shared_bytes > 48 * 1024) {
      Diagnose(rt, "launch of grid " + DimName(grid) + " with blocks of " + DimName(block) +
                       " and " + std::to_string(shared_bytes) + " bytes of dynamic shared memory " +
                       "is not a valid configuration");
      SetLast(cudaErrorInvalidConfiguration);
      return;
    }
    if (stream != nullptr && (rt.streams.count(stream) == 0 || stream->device != t_device)) {
      Diagnose(rt, "launch on a stream that is not a live stream of the current device " +
                       std::to_string(t_device));
      SetLast(cudaErrorInvalidResourceHandle);
      return;
    }
    rt.stats.last_blocks = uint64_t{grid.x} * grid.y * grid.z;
    seed = ++rt.launch_seed;
  }
  if (t_run != nullptr) {
    std::fprintf(stderr, "host grid: a kernel launched a kernel\n");
    std::abort();
  }
  std::mt19937_64 rng(seed);
  const uint64_t blocks = uint64_t{grid.x} * grid.y * grid.z;
  std::vector<uint64_t> order(blocks);
  for (uint64_t i = 0; i < blocks; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  BlockRun run;
  run.thread = &thread;
  t_run = &run;
  gridDim = grid;
  blockDim = block;
  bool ok = true;
  for (uint64_t b : order) {
    blockIdx.x = static_cast<unsigned>(b % grid.x);
    blockIdx.y = static_cast<unsigned>((b / grid.x) % grid.y);
    blockIdx.z = static_cast<unsigned>(b / (uint64_t{grid.x} * grid.y));
    if (!RunBlock(&run, block, rng)) {
      ok = false;
      break;
    }
  }
  t_run = nullptr;
#if defined(OFL_HOST_GRID_ASAN)
  if (!ok) {  // abandoned fibers leave their frames' poison on the stacks the next launch reuses
    for (auto& s : t_stacks) ASAN_UNPOISON_MEMORY_REGION(s.get(), kStackBytes);
  }
#endif
  (void)ok;
}

bool WideIndex() {
  int v = g_wide.load();
  if (v < 0) {
    v = ofl::settings::Flag("OFL_CUDA_HOST_WIDE_INDEX") ? 1 : 0;
    g_wide.store(v);
  }
  return v == 1;
}

void SetWideIndex(bool wide) { g_wide.store(wide ? 1 : 0); }

void CountIndexPath(bool narrow) {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  ++(narrow ? rt.stats.narrow_index : rt.stats.wide_index);
}

void FailNextCall(const std::string& call, cudaError_t error) { FailCall(call, error, 0); }

void FailCall(const std::string& call, cudaError_t error, int skip, bool record) {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  rt.fail_next[call] = Runtime::Injected{error, std::max(skip, 0), record};
}

uint64_t CallCount(const std::string& call) {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  auto it = rt.calls.find(call);
  return it == rt.calls.end() ? 0 : it->second;
}

void ResetPeerAccess() {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  rt.peers.clear();
}

std::string LastDiagnosis() {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  return rt.diagnosis;
}

bool CheckDeviceRange(const void* p, size_t bytes, const std::string& what) {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (DeviceRange(rt, p, bytes) != nullptr) return true;
  Diagnose(rt, what);
  return false;
}

void ResetDevice(int index) {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (ValidDevice(rt, index)) rt.devices[index].sticky = cudaSuccess;
  rt.diagnosis.clear();
  t_last_error = cudaSuccess;
}

Stats GetStats() {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  return rt.stats;
}

// ---- half and bfloat16 --------------------------------------------------------------------------

double FromBits(unsigned bits, int exp_bits, int man_bits) {
  const bool negative = (bits >> (exp_bits + man_bits)) & 1u;
  const unsigned e = (bits >> man_bits) & ((1u << exp_bits) - 1);
  const unsigned m = bits & ((1u << man_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  double v;
  if (e == (1u << exp_bits) - 1) {
    v = m != 0 ? std::nan("") : INFINITY;
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - man_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1u << man_bits)),
                   static_cast<int>(e) - bias - man_bits);
  }
  return negative ? -v : v;
}

unsigned ToBits(double x, int exp_bits, int man_bits) {
  const unsigned sign = std::signbit(x) ? 1u << (exp_bits + man_bits) : 0u;
  const unsigned inf = ((1u << exp_bits) - 1) << man_bits;
  if (std::isnan(x)) return sign | inf | (1u << (man_bits - 1));
  const double a = std::fabs(x);
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int min_exp = 1 - bias;  // of the smallest normal
  if (std::isinf(a)) return sign | inf;
  int e = 0;
  (void)std::frexp(a, &e);
  e -= 1;  // a = significand * 2^e with significand in [1, 2)
  if (a == 0 || e < min_exp) {
    // Subnormal (or rounds up to the smallest normal): a multiple of 2^(min_exp - man_bits).
    const double q = std::nearbyint(std::ldexp(a, man_bits - min_exp));
    return sign | static_cast<unsigned>(q);
  }
  double q = std::nearbyint(std::ldexp(a, man_bits - e));  // in [2^man_bits, 2^(man_bits+1)]
  if (q == std::ldexp(1.0, man_bits + 1)) {
    q /= 2;
    e += 1;
  }
  if (e > bias) return sign | inf;
  return sign | (static_cast<unsigned>(e + bias) << man_bits) |
         (static_cast<unsigned>(q) - (1u << man_bits));
}

}  // namespace ofl::cuda_host

// ---- the runtime calls
// ----------------------------------------------------------------------------

using ofl::cuda_host::Rt;
using ofl::cuda_host::Runtime;
using ofl::cuda_host::t_device;
using ofl::cuda_host::t_last_error;

namespace {

// The lock and the prologue of a runtime call (Begin above).
class Call {
 public:
  explicit Call(const char* name) : lock_(Rt().mu), error_(ofl::cuda_host::Begin(Rt(), name)) {}
  bool failed() const { return error_ != cudaSuccess; }
  cudaError_t error() const { return error_; }
  Runtime& rt() { return Rt(); }
  cudaError_t Fail(cudaError_t err, const std::string& why) {
    ofl::cuda_host::Diagnose(Rt(), why);
    return ofl::cuda_host::SetLast(err);
  }

 private:
  std::lock_guard<std::mutex> lock_;
  cudaError_t error_;
};

}  // namespace

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define OFL_HOST_GRID_NAME(name, value) \
  case name:                            \
    return #name;
    OFL_HOST_GRID_CUDA_ERRORS(OFL_HOST_GRID_NAME)
#undef OFL_HOST_GRID_NAME
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorMisalignedAddress:
      return "misaligned address (host grid)";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure (host grid)";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered (host grid)";
    case cudaErrorInvalidValue:
      return "invalid argument (host grid)";
    case cudaErrorMemoryAllocation:
      return "out of memory (host grid)";
    default:
      return "error reported by the host grid";
  }
}

cudaError_t cudaGetLastError() {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (ofl::cuda_host::ValidDevice(rt, t_device) && rt.devices[t_device].sticky != cudaSuccess) {
    return rt.devices[t_device].sticky;
  }
  const cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (ofl::cuda_host::ValidDevice(rt, t_device) && rt.devices[t_device].sticky != cudaSuccess) {
    return rt.devices[t_device].sticky;
  }
  return t_last_error;
}

cudaError_t cudaGetDeviceCount(int* count) {
  Call c("cudaGetDeviceCount");
  if (c.failed()) return c.error();
  *count = static_cast<int>(c.rt().devices.size());
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  Call c("cudaGetDevice");
  if (c.failed()) return c.error();
  *device = t_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  Call c("cudaSetDevice");
  if (c.failed()) return c.error();
  if (!ofl::cuda_host::ValidDevice(c.rt(), device)) {
    return c.Fail(cudaErrorInvalidDevice, "cudaSetDevice(" + std::to_string(device) + ")");
  }
  t_device = device;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  Call c("cudaDeviceGetAttribute");
  if (c.failed()) return c.error();
  if (!ofl::cuda_host::ValidDevice(c.rt(), device)) return c.Fail(cudaErrorInvalidDevice, "attr");
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = 1024;
      return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = 48 * 1024;
      return cudaSuccess;
    case cudaDevAttrWarpSize:
      *value = 32;
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = c.rt().devices[device].sms;
      return cudaSuccess;
  }
  return c.Fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: unknown attribute");
}

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device) {
  Call c("cudaDeviceCanAccessPeer");
  if (c.failed()) return c.error();
  if (!ofl::cuda_host::ValidDevice(c.rt(), device) ||
      !ofl::cuda_host::ValidDevice(c.rt(), peer_device)) {
    return c.Fail(cudaErrorInvalidDevice, "cudaDeviceCanAccessPeer");
  }
  *can_access = device != peer_device ? 1 : 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags) {
  Call c("cudaDeviceEnablePeerAccess");
  if (c.failed()) return c.error();
  if (flags != 0) return c.Fail(cudaErrorInvalidValue, "cudaDeviceEnablePeerAccess: flags");
  if (!ofl::cuda_host::ValidDevice(c.rt(), peer_device) || peer_device == t_device) {
    return c.Fail(cudaErrorInvalidDevice,
                  "cudaDeviceEnablePeerAccess(" + std::to_string(peer_device) + ")");
  }
  if (!c.rt().peers.insert({t_device, peer_device}).second) {
    return c.Fail(cudaErrorPeerAccessAlreadyEnabled, "cudaDeviceEnablePeerAccess: enabled");
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  Call c("cudaDeviceSynchronize");
  return c.error();
}

cudaError_t cudaMalloc(void** ptr, size_t size) {
  Call c("cudaMalloc");
  if (c.failed()) return c.error();
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  auto& dev = c.rt().devices[t_device];
  if (size > ofl::cuda_host::kDeviceMemory - dev.used) {
    return c.Fail(cudaErrorMemoryAllocation, "cudaMalloc(" + std::to_string(size) + ")");
  }
  const size_t rounded = (size + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  if (p == nullptr) return c.Fail(cudaErrorMemoryAllocation, "cudaMalloc: host");
  dev.used += size;
  c.rt().device_memory[reinterpret_cast<uintptr_t>(p)] = {size, t_device};
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  Call c("cudaFree");
  if (c.failed()) return c.error();
  if (ptr == nullptr) return cudaSuccess;
  auto it = c.rt().device_memory.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == c.rt().device_memory.end()) {
    return c.Fail(cudaErrorInvalidValue, "cudaFree(" + ofl::cuda_host::Hex(ptr) +
                                             "): not the start of a cudaMalloc allocation");
  }
  c.rt().devices[it->second.device].used -= it->second.bytes;
  c.rt().device_memory.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int /*flags*/) {
  Call c("cudaHostAlloc");
  if (c.failed()) return c.error();
  void* p = std::aligned_alloc(64, (std::max<size_t>(size, 1) + 63) / 64 * 64);
  if (p == nullptr) return c.Fail(cudaErrorMemoryAllocation, "cudaHostAlloc");
  c.rt().host_memory.insert(p);
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
  Call c("cudaFreeHost");
  if (c.failed()) return c.error();
  if (c.rt().host_memory.erase(ptr) == 0) {
    return c.Fail(cudaErrorInvalidValue, "cudaFreeHost: not a cudaHostAlloc allocation");
  }
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  Call c("cudaMemGetInfo");
  if (c.failed()) return c.error();
  *total_bytes = ofl::cuda_host::kDeviceMemory;
  *free_bytes = ofl::cuda_host::kDeviceMemory - c.rt().devices[t_device].used;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  Call c("cudaPointerGetAttributes");
  if (c.failed()) return c.error();
  *attributes = cudaPointerAttributes{cudaMemoryTypeUnregistered, -1, nullptr, nullptr};
  const auto* a = ofl::cuda_host::DeviceRange(c.rt(), ptr, 1);
  if (a != nullptr) {
    *attributes =
        cudaPointerAttributes{cudaMemoryTypeDevice, a->device, const_cast<void*>(ptr), nullptr};
  } else if (c.rt().host_memory.count(const_cast<void*>(ptr)) != 0) {
    *attributes = cudaPointerAttributes{cudaMemoryTypeHost, -1, nullptr, const_cast<void*>(ptr)};
  }
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int /*flags*/) {
  Call c("cudaStreamCreateWithFlags");
  if (c.failed()) return c.error();
  *stream = new CUstream_st{t_device};
  c.rt().streams.insert(*stream);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  Call c("cudaStreamDestroy");
  if (c.failed()) return c.error();
  if (c.rt().streams.erase(stream) == 0) {
    return c.Fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: not a live stream");
  }
  delete stream;
  return cudaSuccess;
}

namespace {
bool LiveStream(Runtime& rt, cudaStream_t s) { return s == nullptr || rt.streams.count(s) != 0; }
}  // namespace

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  Call c("cudaStreamSynchronize");
  if (c.failed()) return c.error();
  if (!LiveStream(c.rt(), stream)) return c.Fail(cudaErrorInvalidResourceHandle, "stream");
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int /*flags*/) {
  Call c("cudaStreamWaitEvent");
  if (c.failed()) return c.error();
  if (!LiveStream(c.rt(), stream) || c.rt().events.count(event) == 0) {
    return c.Fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: not a live stream/event");
  }
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int /*flags*/) {
  Call c("cudaEventCreateWithFlags");
  if (c.failed()) return c.error();
  *event = new CUevent_st{t_device};
  c.rt().events.insert(*event);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Call c("cudaEventDestroy");
  if (c.failed()) return c.error();
  if (c.rt().events.erase(event) == 0) {
    return c.Fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy: not a live event");
  }
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  Call c("cudaEventRecord");
  if (c.failed()) return c.error();
  if (!LiveStream(c.rt(), stream) || c.rt().events.count(event) == 0) {
    return c.Fail(cudaErrorInvalidResourceHandle, "cudaEventRecord: not a live stream/event");
  }
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  Call c("cudaEventQuery");
  if (c.failed()) return c.error();
  if (c.rt().events.count(event) == 0) {
    return c.Fail(cudaErrorInvalidResourceHandle, "cudaEventQuery: not a live event");
  }
  return cudaSuccess;  // launches and copies finish before they return
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Call c("cudaEventSynchronize");
  if (c.failed()) return c.error();
  if (c.rt().events.count(event) == 0) {
    return c.Fail(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: not a live event");
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  Call c("cudaMemcpyAsync");
  if (c.failed()) return c.error();
  Runtime& rt = c.rt();
  if (!LiveStream(rt, stream)) return c.Fail(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync");
  if (count == 0) return cudaSuccess;
  const std::string call = "cudaMemcpyAsync(" + ofl::cuda_host::Hex(dst) + ", " +
                           ofl::cuda_host::Hex(src) + ", " + std::to_string(count) + ", kind " +
                           std::to_string(kind) + ")";
  if (dst == nullptr || src == nullptr) return c.Fail(cudaErrorInvalidValue, call + ": null");
  const bool dst_dev = ofl::cuda_host::DeviceRange(rt, dst, count) != nullptr;
  const bool src_dev = ofl::cuda_host::DeviceRange(rt, src, count) != nullptr;
  const bool dst_touches = dst_dev || ofl::cuda_host::IsDevicePointer(rt, dst);
  const bool src_touches = src_dev || ofl::cuda_host::IsDevicePointer(rt, src);
  bool ok = true;
  switch (kind) {
    case cudaMemcpyHostToHost:
      ok = !dst_touches && !src_touches;
      break;
    case cudaMemcpyHostToDevice:
      ok = dst_dev && !src_touches;
      break;
    case cudaMemcpyDeviceToHost:
      ok = src_dev && !dst_touches;
      break;
    case cudaMemcpyDeviceToDevice:
      ok = dst_dev && src_dev;
      break;
    case cudaMemcpyDefault:
      ok = (dst_dev || !dst_touches) && (src_dev || !src_touches);
      break;
  }
  if (!ok) {
    return c.Fail(cudaErrorInvalidValue,
                  call +
                      ": a device range is not inside one cudaMalloc allocation, or a host "
                      "pointer is device memory");
  }
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto s = reinterpret_cast<uintptr_t>(src);
  if (d < s + count && s < d + count) return c.Fail(cudaErrorInvalidValue, call + ": overlap");
  std::memcpy(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t stream) {
  Call c("cudaMemsetAsync");
  if (c.failed()) return c.error();
  if (!LiveStream(c.rt(), stream)) return c.Fail(cudaErrorInvalidResourceHandle, "cudaMemsetAsync");
  if (count == 0) return cudaSuccess;
  if (ofl::cuda_host::DeviceRange(c.rt(), dst, count) == nullptr) {
    return c.Fail(cudaErrorInvalidValue, "cudaMemsetAsync(" + ofl::cuda_host::Hex(dst) + ", " +
                                             std::to_string(count) +
                                             "): not inside one cudaMalloc allocation");
  }
  std::memset(dst, value, count);
  return cudaSuccess;
}
