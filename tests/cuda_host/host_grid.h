// The host grid: the CUDA backend's own source (kernels/cuda/*.cu and *.cpp) compiled by the host
// compiler and run on the CPU, so that every CI run executes the CUDA kernels although no GPU is
// at hand. Nothing in kernels/cuda/ is copied: tests/cuda_host/CMakeLists.txt compiles each file
// again (through a one-line .cpp that includes it) with OFL_CUDA_HOST_GRID defined and shim/ first
// on the include path, into the inline namespace ofl::kernels::cuda::host_grid, so the copies link
// next to the library's own CUDA build without a clash.
//
// How a kernel runs:
// - Launches. Every kernel file launches through kernels::cuda::LaunchKernel
// (kernels/cuda/launch.h),
//   which is `kernel<<<grid, block, 0, stream>>>(args...)` under nvcc and Launch() below here.
//   A launch runs at once on the calling thread (the stream is a record; the VM's asynchronous
//   rules are proved by the sim device, not here). The launch configuration is checked as CUDA
//   checks it (block size, grid limits, a stream of the current device) and a bad one is reported
//   the way CUDA reports it: as the thread's last error, for the caller's CheckLaunch.
// - Threads. Blocks run one after another, in a shuffled order. Within a block every thread is a
//   fiber with its own stack (switched by a few instructions on x86-64, ucontext elsewhere): the
//   scheduler resumes each in a shuffled order until it reaches __syncthreads or returns. When
//   every live thread waits at the same __syncthreads, all are released; a thread that returned
//   while others wait at a barrier, or threads waiting at different barriers, are a divergent
//   barrier: the launch ends with a device fault. The built-in variables (threadIdx, blockIdx,
//   blockDim, gridDim) are per-host-thread records the scheduler sets before it resumes a fiber.
// - Devices. OFL_CUDA_HOST_SMS lists the emulated devices' SM counts (default "1,132": a device
//   whose grid-stride loops make many rounds, and an H100's 132). cudaDeviceGetAttribute reports
//   them, so GridFor sizes grids as it would on such GPUs. Each device has 4 GiB of "memory"
//   (cudaMalloc is a 256-byte aligned host allocation, so ASan sees every access past its end).
// - Shared memory. `__shared__` is a thread_local static: one instance per host thread, which runs
//   one block at a time, so each block sees its own. (Not caught: a block that reads shared memory
//   before writing it sees the previous block's values, where a GPU would give garbage.)
// - Faults. A 16-byte access that is not 16-byte aligned (uint4's copy checks both ends), a
//   divergent barrier, or a copy outside device memory ends the launch: the remaining threads and
//   blocks are abandoned, the device's sticky error is set (cudaErrorMisalignedAddress,
//   cudaErrorLaunchFailure, cudaErrorIllegalAddress), every later call on that device returns it,
//   as on a GPU whose context is lost, and LastDiagnosis() describes it. ResetDevice() clears it (a
//   test's privilege; a process with a real GPU must restart).
// - Index widths. kernels::cuda::UseNarrowIndex asks WideIndex(): with OFL_CUDA_HOST_WIDE_INDEX=1
//   (or SetWideIndex(true)) every kernel takes its 64-bit index path even for small tensors.
// - Runtime calls. cudaMemcpyAsync and cudaMemsetAsync are checked copies: the device side must lie
//   inside one cudaMalloc allocation, the ranges must not overlap, and the kind must match the
//   pointers. FailNextCall() and FailCall() make a call of a runtime function fail with a given
//   error, to test the backend's error handling; CallCount() counts each function's calls.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace ofl::cuda_host {

struct dim3;

// Runs `thread` once per emulated thread of the grid (see above). Sets the calling thread's last
// error for a bad configuration or a device that failed earlier.
void RunGrid(const dim3& grid, const dim3& block, size_t shared_bytes, cudaStream_t stream,
             const std::function<void()>& thread);

template <class... Params, class... Args>
void Launch(void (*kernel)(Params...), const dim3& grid, const dim3& block, size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
  // The parameters as the GPU holds them: converted once per launch; each thread's call copies
  // them into its own by-value parameters.
  std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  RunGrid(grid, block, shared_bytes, stream, [&] { std::apply(kernel, params); });
}

// Whether kernels take their 64-bit index path whatever the size (OFL_CUDA_HOST_WIDE_INDEX).
bool WideIndex();
void SetWideIndex(bool wide);
// Counts a launch's index path, for Stats().
void CountIndexPath(bool narrow);

// The next call of the runtime function `call` ("cudaSetDevice", "cudaEventQuery", ...), on any
// thread, returns `error` instead of doing its work (recorded as the last error, as CUDA does).
void FailNextCall(const std::string& call, cudaError_t error);
// The same, after `skip` further calls of `call` have done their work: FailCall("cudaSetDevice",
// e, 1) lets the next cudaSetDevice through and fails the one after it (a DeviceGuard's restore).
// With `record` false the error is only returned, not recorded as the thread's last error: the way
// a runtime may report a status such as cudaErrorNotReady, which driver_types.h calls "not actually
// an error"; the backend must handle it either way. A later FailCall for `call` replaces this one.
void FailCall(const std::string& call, cudaError_t error, int skip, bool record = true);
// How many times the runtime function `call` has been called in this process (injected failures
// included), to check that code makes, or does not make, a call.
uint64_t CallCount(const std::string& call);
// Forgets every peer access cudaDeviceEnablePeerAccess has enabled, so that a test starts from
// devices that have never been joined.
void ResetPeerAccess();
// The description of the last device fault or refused call ("" when none), e.g. "16-byte vector
// load from 0x...08 is not 16-byte aligned (block (0,0,0), thread (3,0,0))".
std::string LastDiagnosis();
// Whether [p, p + bytes) lies inside one cudaMalloc allocation; when it does not, `what` becomes
// the diagnosis (LastDiagnosis). For the shims of libraries that take device pointers (cuBLAS).
bool CheckDeviceRange(const void* p, size_t bytes, const std::string& what);
// Clears device `index`'s sticky error and the calling thread's last error.
void ResetDevice(int index);

struct Stats {
  uint64_t barriers = 0;      // barrier releases of a whole block
  uint64_t narrow_index = 0;  // launches that took the 32-bit index path
  uint64_t wide_index = 0;    // launches that took the 64-bit index path
  uint64_t last_blocks = 0;   // the blocks of the last launch's grid
};
Stats GetStats();

// Half and bfloat16 encodings: the value of `bits` in a binary format with `exp_bits` exponent and
// `man_bits` mantissa bits, and `x` rounded to that format (to nearest, ties to even).
double FromBits(unsigned bits, int exp_bits, int man_bits);
unsigned ToBits(double x, int exp_bits, int man_bits);

}  // namespace ofl::cuda_host
