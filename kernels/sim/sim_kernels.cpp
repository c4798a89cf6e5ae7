// The sim device's kernels: each one launches the CPU kernel of the same contract as a task on the
// sim stream, over the simulator's read-write views of the operands, and returns at once, as a GPU
// kernel launch does, after the arguments are checked on the calling thread (kernel_checks.h): a
// bad one is an InvalidArgument at the call, not a DeviceError from the stream. Nothing here
// touches device memory on the calling thread.
#include <string>
#include <utility>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_checks.h"
#include "kernels/sim/sim_backend.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::sim {

namespace {

// Enqueues `fn` over a copy of `ctx` whose pointers are the simulator's views: the caller's
// context (and its vectors) may be gone by the time the task runs.
void Launch(KernelFn fn, const KernelContext& ctx) {
  SimBackend& backend = SimBackend::Instance();
  KernelContext host = ctx;
  for (TensorArg& a : host.inputs) a.data = backend.HostView(a.data);
  for (TensorArg& a : host.outputs) a.data = backend.HostView(a.data);
  backend.Enqueue(ctx.stream, [fn, host = std::move(host)] { fn(host); });
}

}  // namespace

void CopyKernel(const KernelContext& ctx) {
  CheckCopyArgs(ctx);
  Launch(&cpu::CopyKernel, ctx);
}

void RepeatKernel(const KernelContext& ctx) {
  CheckRepeatArgs(ctx);
  Launch(&cpu::RepeatKernel, ctx);
}

void ReduceSumToKernel(const KernelContext& ctx) {
  CheckReduceSumToArgs(ctx);
  Launch(&cpu::ReduceSumToKernel, ctx);
}

void EmptyKernel(const KernelContext& /*ctx*/) {}

void RegisterSimKernels() {
  RegisterBuiltinKernel("copy", DeviceType::kSim, &CopyKernel);
  RegisterBuiltinKernel("repeat", DeviceType::kSim, &RepeatKernel);
  RegisterBuiltinKernel("reduce_sum_to", DeviceType::kSim, &ReduceSumToKernel);
  RegisterBuiltinKernel("empty", DeviceType::kSim, &EmptyKernel);
}

}  // namespace ofl::kernels::sim
