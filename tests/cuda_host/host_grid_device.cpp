#include "host_grid_device.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include "kernels/cuda/cuda_backend.h"

namespace ofl::cuda_host {

std::shared_ptr<DeviceBackend> HostGridBackend() {
  static const std::shared_ptr<DeviceBackend> backend =
      std::make_shared<kernels::cuda::CudaBackend>();
  return backend;
}

DeviceType RegisterHostGridDevice() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_device_backend(kDeviceTypeName, HostGridBackend());
    DeviceType type;
    find_device_type(kDeviceTypeName, &type);
    kernels::cuda::RegisterCudaKernels(type);
  });
  DeviceType type;
  find_device_type(kDeviceTypeName, &type);
  return type;
}

namespace {

// A suite run with OFL_TEST_DEVICE=cudahost:N needs the type before its environment parses the
// variable (tests/common/device_availability.cpp).
[[maybe_unused]] const bool kRegisteredForTheTestDevice = [] {
  const char* v = std::getenv("OFL_TEST_DEVICE");
  if (v != nullptr && std::string(v).rfind(kDeviceTypeName, 0) == 0) RegisterHostGridDevice();
  return true;
}();

}  // namespace
}  // namespace ofl::cuda_host
