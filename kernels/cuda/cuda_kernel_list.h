// The CUDA kernels' self-registration: OFL_REGISTER_CUDA_KERNEL(op, fn) beside a kernel adds it to
// the list of its own build (the library's nvcc build, or a host-grid build of the same source:
// kernels/cuda/cuda_namespace.h), and RegisterCudaKernels(type) registers that list for a device
// type when the type is first used.
#pragma once

#include "kernels/cuda/cuda_namespace.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {

struct KernelRegistrar {
  KernelRegistrar(const char* op, KernelFn fn);  // appends to this build's list
};

// Registers every kernel of this build's list for `type`: DeviceType::kCUDA, or the host grid's
// device type in its tests. A kernel a program registered before for the same op and type stays.
void RegisterCudaKernels(DeviceType type);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda

#define OFL_REGISTER_CUDA_KERNEL(op, fn)                                                           \
  static const ::ofl::kernels::cuda::KernelRegistrar OFL_KERNEL_CONCAT(ofl_cuda_kernel_registrar_, \
                                                                       __LINE__)(op, &fn)
