// The built-in device types (cpu, sim, cuda) as entries of one table, each registered from its
// backend's own file with OFL_REGISTER_BUILTIN_DEVICE, as a program registers a type of its own
// with register_device_backend. The registry (device_backend.cpp) makes a built-in backend on the
// type's first use, so a program that never names a type never pays for it (one that never names
// cuda never calls the CUDA runtime), and knows no device type by name.
#pragma once

#include <memory>

#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels {

struct BuiltinDevice {
  DeviceType type;
  // Where the type stands in the lists of error messages ("cpu, sim, cuda").
  int listed_at;
  // Makes the backend, registering first the type's kernels that are not registered beside their
  // code (CUDA's list). Called once, on the type's first use. Null for a type this build lacks.
  std::shared_ptr<DeviceBackend> (*make)();
  // For a type this build lacks: the DeviceError of its first use, saying why.
  const char* missing;
};

void RegisterBuiltinDevice(const BuiltinDevice& entry);
// The entry of `type`; null when the type is not built in.
const BuiltinDevice* FindBuiltinDevice(DeviceType type);

struct BuiltinDeviceRegistrar {
  explicit BuiltinDeviceRegistrar(const BuiltinDevice& entry) { RegisterBuiltinDevice(entry); }
};

}  // namespace ofl::kernels

// One per built-in type, in the file of its backend: OFL_REGISTER_BUILTIN_DEVICE(DeviceType::kSim,
// 1, &MakeSimBackend, nullptr).
#define OFL_REGISTER_BUILTIN_DEVICE(type, listed_at, make, missing)                   \
  static const ::ofl::kernels::BuiltinDeviceRegistrar ofl_builtin_device_registrar_ { \
    ::ofl::kernels::BuiltinDevice { type, listed_at, make, missing }                  \
  }
