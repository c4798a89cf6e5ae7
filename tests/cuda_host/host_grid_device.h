// The host grid as a device type of the runtime: "cudahost", whose backend is the CUDA backend
// (kernels/cuda/cuda_backend.cpp) and whose kernels are the CUDA kernels, all compiled for the host
// grid (host_grid.h). OFL_TEST_DEVICE=cudahost:N runs the kernel value suites of tests/kernels on
// them (tests/kernels/kernel_test_util.h); device N has the N-th SM count of OFL_CUDA_HOST_SMS.
#pragma once

#include <memory>
#include <string>

#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"

namespace ofl::cuda_host {

inline constexpr const char* kDeviceTypeName = "cudahost";

// Registers "cudahost" on the first call; returns its device type.
DeviceType RegisterHostGridDevice();

// The host grid's CUDA backend (one per process).
std::shared_ptr<DeviceBackend> HostGridBackend();

}  // namespace ofl::cuda_host
