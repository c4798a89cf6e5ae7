// Turning CUDA runtime errors into oneflow_lite errors. Host code only (the backend and the kernel
// launchers); kernels themselves report through cudaGetLastError after their launch.
//
// An error that leaves the CUDA context unusable (an illegal address inside a kernel, a launch
// failure, ...: CUDA's "sticky" errors) becomes DeviceFailed, which marks the device failed in the
// VM; every other error becomes DeviceError. Both name the call and CUDA's error string.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "oneflow_lite/extension.h"

namespace ofl::kernels::cuda {

// Whether `err` leaves the context unusable until the process exits.
bool IsSticky(cudaError_t err);

// "<call> failed: <CUDA error name>: <CUDA error string>[ (<context>)]"
std::string Describe(cudaError_t err, const char* call, const std::string& context = {});

// Throws DeviceFailed or DeviceError for a failed call; clears a non-sticky error so that it does
// not resurface from the next call.
[[noreturn]] void ThrowCudaError(cudaError_t err, const char* call,
                                 const std::string& context = {});

inline void Check(cudaError_t err, const char* call, const std::string& context = {}) {
  if (err != cudaSuccess) ThrowCudaError(err, call, context);
}

// After a kernel launch: a bad launch configuration or a sticky error from earlier work.
// `what` names the kernel and the op ("copy kernel for op expand on cuda:0/compute").
void CheckLaunch(const std::string& what);

// Makes `index` current on this thread for the scope and restores the previous device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ofl::kernels::cuda
