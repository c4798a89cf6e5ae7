#include <map>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {

namespace {
struct Registry {
  std::shared_mutex mu;
  std::map<std::pair<std::string, DeviceType>, KernelFn> kernels;
};

// Never destroyed: kernels may be looked up while the process exits.
Registry& RawRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

// The registry with the built-in kernels registered (once, on first look-up).
Registry& GetRegistry() {
  static std::once_flag builtins;
  std::call_once(builtins, [] { cpu::RegisterCpuKernels(); });
  return RawRegistry();
}
}  // namespace

void RegisterKernel(const std::string& op, DeviceType device_type, KernelFn fn) {
  Registry& reg = RawRegistry();
  std::unique_lock lock(reg.mu);
  reg.kernels[{op, device_type}] = fn;
}

void RegisterBuiltinKernel(const std::string& op, DeviceType device_type, KernelFn fn) {
  Registry& reg = RawRegistry();
  std::unique_lock lock(reg.mu);
  reg.kernels.emplace(std::make_pair(op, device_type), fn);  // a program's own kernel stays
}

KernelFn TryFindKernel(const std::string& op, DeviceType device_type) {
  Registry& reg = GetRegistry();
  std::shared_lock lock(reg.mu);
  auto it = reg.kernels.find({op, device_type});
  return it == reg.kernels.end() ? nullptr : it->second;
}

KernelFn FindKernel(const std::string& op, DeviceType device_type) {
  KernelFn fn = TryFindKernel(op, device_type);
  if (fn == nullptr) {
    throw InvalidArgument(op + ": no kernel registered for device type " + to_string(device_type));
  }
  return fn;
}

}  // namespace ofl::kernels
