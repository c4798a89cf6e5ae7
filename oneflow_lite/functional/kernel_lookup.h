// The one kernel cache of the op call stages: a kernel by name per device type, looked up in the
// registry again only when it changed (a later register_kernel replaces an earlier one,
// extension.h), so the per-call path skips the registry's lock. An op definition holds no cache:
// its kernels sit here, in a table indexed by the op's registration id.
#pragma once

#include <atomic>
#include <string>

#include "kernels/kernel.h"
#include "ops/op_schema.h"

namespace ofl::functional {

class KernelCache {
 public:
  explicit KernelCache(std::string op) : op_(std::move(op)) {}
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel of this name for `type`; InvalidArgument naming `caller` (the op being called),
  // the kernel and the device type when none is registered.
  kernels::KernelFn Get(DeviceType type, const std::string& caller) {
    const int t = static_cast<int>(type);
    const uint64_t gen = kernels::RegistryGeneration();
    if (generation_[t].load(std::memory_order_acquire) == gen) {
      return fns_[t].load(std::memory_order_acquire);
    }
    return Refresh(type, gen, caller);
  }
  kernels::KernelFn Get(DeviceType type) { return Get(type, op_); }

 private:
  kernels::KernelFn Refresh(DeviceType type, uint64_t gen, const std::string& caller);

  std::string op_;
  std::atomic<kernels::KernelFn> fns_[kMaxDeviceTypes] = {};
  std::atomic<uint64_t> generation_[kMaxDeviceTypes] = {};  // 0: never looked up
};

// The kernel of `op` (its `kernel` name) for `type`, from the cache of the op's id.
kernels::KernelFn KernelFor(const ops::OpSchema& op, DeviceType type);

}  // namespace ofl::functional
