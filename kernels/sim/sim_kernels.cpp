// The sim device's kernels: the generic wrapper of kernels/register_kernel.h runs every CPU kernel
// as a task on the sim stream, over the simulator's read-write views of the operands, and returns
// at once, as a GPU kernel launch does. Nothing here touches device memory on the calling thread.
#include <utility>

#include "kernels/register_kernel.h"
#include "kernels/sim/sim_backend.h"

namespace ofl::kernels::sim {

// The caller's context (and its vectors) may be gone by the time the task runs: the task owns a
// copy whose pointers are the simulator's views.
void LaunchCpuKernel(KernelFn cpu, const KernelContext& ctx) {
  SimBackend& backend = SimBackend::Instance();
  KernelContext host = ctx;
  for (TensorArg& a : host.inputs) a.data = backend.HostView(a.data);
  for (TensorArg& a : host.outputs) a.data = backend.HostView(a.data);
  backend.Enqueue(ctx.stream, [cpu, host = std::move(host)] { cpu(host); });
}

}  // namespace ofl::kernels::sim
