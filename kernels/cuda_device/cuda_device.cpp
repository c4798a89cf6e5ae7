// The cuda device type, in a build with CUDA: its backend and the list of its kernels, made on the
// first use of a cuda device (kernels/builtin_device.h). Compiled only with CUDA; without it,
// cuda_missing.cpp says why a cuda device cannot be used.
#include <memory>

#include "kernels/builtin_device.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_kernel_list.h"

namespace ofl::kernels::cuda {
namespace {

std::shared_ptr<DeviceBackend> MakeCudaBackend() {
  RegisterCudaKernels(DeviceType::kCUDA);
  return std::make_shared<CudaBackend>();
}

OFL_REGISTER_BUILTIN_DEVICE(DeviceType::kCUDA, 2, &MakeCudaBackend, nullptr);

}  // namespace
}  // namespace ofl::kernels::cuda
