#include "kernels/cuda/cuda_check.h"

namespace ofl::kernels::cuda {

bool IsSticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

std::string Describe(cudaError_t err, const char* call, const std::string& context) {
  std::string s =
      std::string(call) + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  if (!context.empty()) s += " (" + context + ")";
  return s;
}

void ThrowCudaError(cudaError_t err, const char* call, const std::string& context) {
  const std::string msg = Describe(err, call, context);
  if (IsSticky(err)) {
    throw DeviceFailed(msg + "; the CUDA context is unusable until the process exits");
  }
  (void)cudaGetLastError();  // a non-sticky error must not resurface from the next call
  throw DeviceError(msg);
}

void CheckLaunch(const std::string& what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) ThrowCudaError(err, "kernel launch", what);
}

DeviceGuard::DeviceGuard(int index) {
  Check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ == index) {
    previous_ = -1;
    return;
  }
  Check(cudaSetDevice(index), "cudaSetDevice", "device " + std::to_string(index));
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

}  // namespace ofl::kernels::cuda
