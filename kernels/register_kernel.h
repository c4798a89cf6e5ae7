// How a built-in kernel registers itself: one line beside its code, run when the library loads.
//
//   OFL_REGISTER_CPU_KERNEL("copy", CopyKernel, CheckCopyArgs);   // kernels/cpu/: cpu, and sim
//   OFL_REGISTER_CUDA_KERNEL("copy", CopyKernel);                  // kernels/cuda/
//
// A CPU kernel also serves the sim device through one generic wrapper (sim::SimKernel below): the
// argument check runs on the calling thread, as a GPU launch checks before it queues, then the
// CPU kernel runs as a task on the sim stream over the simulator's views of the operands. So a new
// op needs no sim code at all.
//
// CUDA kernels go into a list of their own build (kernels/cuda/cuda_namespace.h): the library's
// nvcc build and the host grid's CPU build of the same files each keep their own list, which
// RegisterCudaKernels(type) registers when that device type is first used.
//
// The contracts of the built-in ops' kernels are written once, in oneflow_lite/extension.h.
#pragma once

#include "kernels/kernel.h"

namespace ofl::kernels {

// For a kernel whose arguments need no check before the launch.
inline void NoCheck(const KernelContext& /*ctx*/) {}

namespace sim {
// Enqueues `cpu` on ctx.stream (a sim stream) over a copy of ctx whose pointers are the
// simulator's views, and returns at once (kernels/sim/sim_kernels.cpp).
void LaunchCpuKernel(KernelFn cpu, const KernelContext& ctx);

// The generic sim kernel around a CPU kernel (kCheck: a function taking the context; what it
// returns is ignored).
template <KernelFn kCpu, auto kCheck>
void SimKernel(const KernelContext& ctx) {
  kCheck(ctx);
  LaunchCpuKernel(kCpu, ctx);
}
}  // namespace sim

struct CpuKernelRegistrar {
  CpuKernelRegistrar(const char* op, KernelFn cpu, KernelFn sim) {
    RegisterBuiltinKernel(op, DeviceType::kCPU, cpu);
    RegisterBuiltinKernel(op, DeviceType::kSim, sim);
  }
};

}  // namespace ofl::kernels

#define OFL_KERNEL_CONCAT_INNER(a, b) a##b
#define OFL_KERNEL_CONCAT(a, b) OFL_KERNEL_CONCAT_INNER(a, b)

// `fn` and `check` are functions in scope (check: ::ofl::kernels::NoCheck when none is needed).
#define OFL_REGISTER_CPU_KERNEL(op, fn, check)                       \
  static const ::ofl::kernels::CpuKernelRegistrar OFL_KERNEL_CONCAT( \
      ofl_cpu_kernel_registrar_, __LINE__)(op, &fn, &::ofl::kernels::sim::SimKernel<&fn, &check>)
