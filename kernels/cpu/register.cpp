// Registration of the CPU kernels under their op names, plus the kernels too small for a file.
#include "kernels/cpu/cpu_kernels.h"

namespace ofl::kernels::cpu {

void EmptyKernel(const KernelContext& /*ctx*/) {}

void RegisterCpuKernels() {
  RegisterBuiltinKernel("copy", DeviceType::kCPU, &CopyKernel);
  RegisterBuiltinKernel("repeat", DeviceType::kCPU, &RepeatKernel);
  RegisterBuiltinKernel("reduce_sum_to", DeviceType::kCPU, &ReduceSumToKernel);
  RegisterBuiltinKernel("empty", DeviceType::kCPU, &EmptyKernel);
}

}  // namespace ofl::kernels::cpu
