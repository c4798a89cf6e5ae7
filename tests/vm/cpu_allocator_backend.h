// For the pool tests: a pool's memory as the CPU pool gets it, page-aligned host memory from the
// CPU backend (kernels/cpu/cpu_backend.cpp), without a VM.
#pragma once

#include "kernels/device_backend.h"
#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {

class CpuAllocatorBackend : public DeviceMemoryBackend {
 public:
  CpuAllocatorBackend() : DeviceMemoryBackend(kernels::GetBackend(DeviceType::kCPU), 0) {}
};

}  // namespace ofl::vm
