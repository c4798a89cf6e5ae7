// Turning CUDA runtime errors into oneflow_lite errors. Host code only (the backend and the kernel
// launchers); kernels themselves report through cudaGetLastError after their launch.
//
// An error that leaves the CUDA context unusable (an illegal address inside a kernel, a launch
// failure, ...: CUDA's "sticky" errors, listed with their reasons by StickyErrors()) becomes
// DeviceFailed, which marks the device failed in the VM; every other error becomes DeviceError.
// Both name the call and CUDA's error string.
//
// The thread's last error (cudaGetLastError) is cleared only where it holds exactly the error this
// code has just handled (ClearLastErrorIf): an unrelated pending error stays for the call that owns
// it instead of vanishing.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "kernels/cuda/cuda_namespace.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {

// One error that leaves the context unusable, and why (CUDA's documentation, driver_types.h).
struct StickyError {
  cudaError_t code;
  const char* why;
};

// Every error IsSticky accepts, in enum order.
const std::vector<StickyError>& StickyErrors();

// Whether `err` leaves the context unusable until the process exits.
bool IsSticky(cudaError_t err);

// "<call> failed: <CUDA error name>: <CUDA error string>[ (<context>)]"
std::string Describe(cudaError_t err, const char* call, const std::string& context = {});

// Resets the thread's last error when it is `expected` (the error a call just returned and the
// caller has handled); any other pending error is left in place.
void ClearLastErrorIf(cudaError_t expected);

// Throws DeviceFailed or DeviceError for a failed call; clears a non-sticky error so that it does
// not resurface from the next call.
[[noreturn]] void ThrowCudaError(cudaError_t err, const char* call,
                                 const std::string& context = {});

inline void Check(cudaError_t err, const char* call, const std::string& context = {}) {
  if (err != cudaSuccess) ThrowCudaError(err, call, context);
}

// Makes `index` current on this thread for the scope and restores the previous device. The
// destructor cannot throw: a failed restore is cleared from the thread's last error (so that the
// next call does not report it as its own) and logged as a warning (kernels/log_warning.h).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int index_ = -1;
  int previous_ = -1;
};

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
