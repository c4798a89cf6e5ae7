// The sim device's kernels: each one launches the CPU kernel of the same contract as a task on the
// sim stream, over the simulator's read-write views of the operands, and returns at once, as a GPU
// kernel launch does. Nothing here touches device memory on the calling thread.
#include <string>
#include <utility>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/sim/sim_backend.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::sim {

namespace {

// Checks on the calling thread what would otherwise only fail on the stream thread, where an
// error surfaces later as a DeviceError: a missing operand would be an out-of-bounds read there.
void CheckArity(const char* op, const KernelContext& ctx, size_t inputs) {
  if (ctx.inputs.size() != inputs || ctx.outputs.size() != 1) {
    throw InvalidArgument(std::string(op) + ": sim kernel expects " + std::to_string(inputs) +
                          " input(s) and 1 output, got " + std::to_string(ctx.inputs.size()) +
                          " and " + std::to_string(ctx.outputs.size()));
  }
}

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
  CheckArity("copy", ctx, 1);
  Launch(&cpu::CopyKernel, ctx);
}

void RepeatKernel(const KernelContext& ctx) {
  CheckArity("repeat", ctx, 1);
  Launch(&cpu::RepeatKernel, ctx);
}

void ReduceSumToKernel(const KernelContext& ctx) {
  CheckArity("reduce_sum_to", ctx, 1);
  // The contract says bool throws InvalidArgument: at the call, as the CPU kernel does.
  if (ctx.inputs[0].dtype == DType::kBool || ctx.outputs[0].dtype == DType::kBool) {
    throw InvalidArgument(
        "reduce_sum_to: dtype bool is not supported (cast the tensor to an integer dtype before "
        "summing it)");
  }
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
