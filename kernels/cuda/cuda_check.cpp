#include "kernels/cuda/cuda_check.h"

#include <exception>

#include "kernels/log_warning.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

// The errors after which the context cannot be used again. Those with a quoted reason are every
// entry of CUDA 13's enum cudaError (driver_types.h) whose documentation says so, in its words;
// tests/cuda/cuda_error_table_test.cpp checks against the installed header that none is missing.
// The three others are kept on the grounds given with them.
constexpr const char* kRelaunch =
    "\"This leaves the process in an inconsistent state and any further CUDA work will return the "
    "same error. To continue using CUDA, the process must be terminated and relaunched.\"";
constexpr StickyError kStickyErrors[] = {
    // Not documented as sticky: an uncorrectable hardware fault in device memory, so memory this
    // context holds may be corrupt and no result from the device can be trusted.
    {cudaErrorECCUncorrectable, "an uncorrectable ECC error: device memory may be corrupt"},
    // Not documented as sticky: the same for data in flight between GPUs over NVLink.
    {cudaErrorNvlinkUncorrectable,
     "an uncorrectable NVLink error: data moved between GPUs may be corrupt"},
    {cudaErrorContained,
     "\"an exception occurred on the device that is now contained by the GPU's error containment "
     "capability\" ... \"the process must be terminated and relaunched.\""},
    {cudaErrorIllegalAddress, kRelaunch},
    {cudaErrorLaunchTimeout, kRelaunch},
    {cudaErrorAssert,
     "\"The device cannot be used again. All existing allocations are invalid. To continue using "
     "CUDA, the process must be terminated and relaunched.\""},
    {cudaErrorHardwareStackError, kRelaunch},
    {cudaErrorIllegalInstruction, kRelaunch},
    {cudaErrorMisalignedAddress, kRelaunch},
    {cudaErrorInvalidAddressSpace, kRelaunch},
    {cudaErrorInvalidPc, kRelaunch},
    {cudaErrorLaunchFailure, kRelaunch},
    {cudaErrorTensorMemoryLeak, kRelaunch},
    {cudaErrorMpsClientTerminated,
     "\"the MPS client has been terminated by the server. To continue using CUDA, the process must "
     "be terminated and relaunched.\""},
    {cudaErrorExternalDevice, kRelaunch},
    // Not documented as sticky ("an unknown internal error has occurred"): the driver's state is
    // unknown, so the device is treated as failed rather than trusted with more work.
    {cudaErrorUnknown, "an unknown internal error: the context's state cannot be trusted"},
};

}  // namespace

const std::vector<StickyError>& StickyErrors() {
  static const std::vector<StickyError> errors(std::begin(kStickyErrors), std::end(kStickyErrors));
  return errors;
}

bool IsSticky(cudaError_t err) {
  for (const StickyError& e : kStickyErrors) {
    if (e.code == err) return true;
  }
  return false;
}

std::string Describe(cudaError_t err, const char* call, const std::string& context) {
  std::string s =
      std::string(call) + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  if (!context.empty()) s += " (" + context + ")";
  return s;
}

void ClearLastErrorIf(cudaError_t expected) {
  if (cudaPeekAtLastError() == expected) (void)cudaGetLastError();
}

void ThrowCudaError(cudaError_t err, const char* call, const std::string& context) {
  const std::string msg = Describe(err, call, context);
  if (IsSticky(err)) {
    throw DeviceFailed(msg + "; the CUDA context is unusable until the process exits");
  }
  ClearLastErrorIf(err);  // a non-sticky error must not resurface from the next call
  throw DeviceError(msg);
}

DeviceGuard::DeviceGuard(int index) : index_(index) {
  Check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ == index) {
    previous_ = -1;
    return;
  }
  Check(cudaSetDevice(index), "cudaSetDevice", "device " + std::to_string(index));
}

DeviceGuard::~DeviceGuard() {
  if (previous_ < 0) return;
  const cudaError_t err = cudaSetDevice(previous_);
  if (err == cudaSuccess) return;
  // The failure is this guard's own: left in the thread's last error, the next launch check on this
  // thread would report it as the kernel's. A sticky error cannot be cleared, and every later call
  // on that device reports it anyway.
  ClearLastErrorIf(err);
  try {
    LogWarning(Describe(err, "cudaSetDevice",
                        "restoring device " + std::to_string(previous_) + " after work on device " +
                            std::to_string(index_)) +
               "; this thread may still have device " + std::to_string(index_) + " current");
  } catch (const std::exception&) {
    // Out of memory while building the warning: nothing more can be done from a destructor.
  }
}

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
