// Registration of the CPU kernels under their op names, plus the kernels too small for a file.
#include "kernels/cpu/cpu_kernels.h"

namespace ofl::kernels::cpu {

void EmptyKernel(const KernelContext& /*ctx*/) {}

void RegisterCpuKernels() {
  RegisterKernel("copy", DeviceType::kCPU, &CopyKernel);
  RegisterKernel("repeat", DeviceType::kCPU, &RepeatKernel);
  RegisterKernel("reduce_sum_to", DeviceType::kCPU, &ReduceSumToKernel);
  RegisterKernel("empty", DeviceType::kCPU, &EmptyKernel);
}

}  // namespace ofl::kernels::cpu
