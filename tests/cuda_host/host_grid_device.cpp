// The host grid as a device type of the runtime, for the kernel value suites of tests/kernels:
// with OFL_TEST_DEVICE=cudahost:N, the device type "cudahost" is registered before main (the
// suites' environment parses the variable first: tests/common/device_availability.cpp), its backend
// the CUDA backend (kernels/cuda/cuda_backend.cpp) and its kernels the CUDA kernels, all compiled
// for the host grid (host_grid.h); device N has the N-th SM count of OFL_CUDA_HOST_SMS. Compiled
// into ofl_test_kernels itself (tests/CMakeLists.txt), so that this registration always links.
#include <cstdlib>
#include <memory>
#include <string>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_kernel_list.h"
#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/settings.h"

namespace ofl::cuda_host {
namespace {

constexpr const char* kDeviceTypeName = "cudahost";

[[maybe_unused]] const bool kRegistered = [] {
  if (settings::String("OFL_TEST_DEVICE").rfind(kDeviceTypeName, 0) != 0) return false;
  register_device_backend(kDeviceTypeName, std::make_shared<kernels::cuda::CudaBackend>());
  DeviceType type;
  find_device_type(kDeviceTypeName, &type);
  kernels::cuda::RegisterCudaKernels(type);
  return true;
}();

}  // namespace
}  // namespace ofl::cuda_host
