// The CPU kernels too small for a file of their own.
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cpu {

void EmptyKernel(const KernelContext& /*ctx*/) {}
OFL_REGISTER_CPU_KERNEL("empty", EmptyKernel, NoCheck);

}  // namespace ofl::kernels::cpu
