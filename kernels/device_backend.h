// The registry of device backends (oneflow_lite/extension.h): which DeviceBackend serves each
// device type. "cpu" is built in, "sim" (the simulated accelerator) is made on first use so that
// nobody else pays for it, and a program may add its own types with register_device_backend.
#pragma once

#include <string>

#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels {

// The backend of `type`; throws DeviceError naming the type when no backend is registered for it.
// The pointer stays valid for the life of the process (replaced backends are kept).
DeviceBackend* GetBackend(DeviceType type);
// nullptr instead of throwing.
DeviceBackend* TryGetBackend(DeviceType type);
// The device types that have a backend, "cpu, sim, mydev", for error messages.
std::string BackendTypeNames();

}  // namespace ofl::kernels
