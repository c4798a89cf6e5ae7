// The host grid's stand-in for CUDA's <cuda_runtime.h>: everything a kernel file
// (kernels/cuda/*.cu) uses on the device side, for a host compiler. The qualifiers vanish (a
// __global__ function is a plain function the host grid calls once per emulated thread), the
// built-in index variables are per-thread records the host grid sets before it resumes a thread,
// __syncthreads is the host grid's barrier, and uint4 checks the alignment of every 16-byte access.
// Design: tests/cuda_host/host_grid.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// Block-shared memory: one instance per host thread, which runs one block at a time (host_grid.h).
#define __shared__ static thread_local

// The vector types live in a namespace of their own, so that they never meet CUDA's own types of
// the same names (the library's CUDA build) at link time.
namespace ofl::cuda_host {

struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
};

// Ends the calling emulated thread's launch with a device fault (host_grid.cpp); never returns.
[[noreturn]] void DeviceFault(cudaError_t error, const char* what, const void* address);
// __trap(): the same, as cudaErrorLaunchFailure (what a trap instruction gives on a GPU).
[[noreturn]] void DeviceTrap();
void SyncThreads(const char* file, int line);

// A 16-byte vector, as the GPU loads and stores it: every copy checks that both ends are 16-byte
// aligned (on the GPU a misaligned vector access ends the kernel with cudaErrorMisalignedAddress).
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
  uint4() = default;
  uint4(const uint4& other) {
    Check(&other, "16-byte vector load");
    Check(this, "16-byte vector store");
    std::memcpy(static_cast<void*>(this), &other, 16);
  }
  uint4& operator=(const uint4& other) {
    Check(&other, "16-byte vector load");
    Check(this, "16-byte vector store");
    std::memcpy(static_cast<void*>(this), &other, 16);
    return *this;
  }

 private:
  static void Check(const void* p, const char* what) {
    uintptr_t address = reinterpret_cast<uintptr_t>(p);
    // A uint4 is 16-byte aligned in valid C++, so a compiler may fold this test to false (clang
    // does at -O1): the empty asm hides where the value came from.
    asm volatile("" : "+r"(address));
    if (address % 16 != 0) {
      DeviceFault(cudaErrorMisalignedAddress, what, p);
    }
  }
};

// The built-in variables of the running emulated thread.
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

}  // namespace ofl::cuda_host

using ofl::cuda_host::blockDim;
using ofl::cuda_host::blockIdx;
using ofl::cuda_host::dim3;
using ofl::cuda_host::gridDim;
using ofl::cuda_host::threadIdx;
using ofl::cuda_host::uint3;
using ofl::cuda_host::uint4;
constexpr int warpSize = 32;

#define __syncthreads() ::ofl::cuda_host::SyncThreads(__FILE__, __LINE__)
[[noreturn]] inline void __trap() { ::ofl::cuda_host::DeviceTrap(); }

#include "../host_grid.h"
