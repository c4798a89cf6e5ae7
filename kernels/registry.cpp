#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {

namespace {
struct Registry {
  std::shared_mutex mu;
  std::map<std::pair<std::string, DeviceType>, KernelFn> kernels;
  std::set<std::string> declared;
};

// Never destroyed: kernels may be looked up while the process exits.
Registry& RawRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

// The built-in kernels registered themselves while the library loaded (kernels/register_kernel.h).
Registry& GetRegistry() { return RawRegistry(); }
}  // namespace

std::atomic<uint64_t> generation{1};

uint64_t RegistryGeneration() { return generation.load(std::memory_order_acquire); }

void RegisterKernel(const std::string& op, DeviceType device_type, KernelFn fn) {
  Registry& reg = RawRegistry();
  std::unique_lock lock(reg.mu);
  reg.kernels[{op, device_type}] = fn;
  generation.fetch_add(1, std::memory_order_acq_rel);
}

// The built-in kernel functions, for IsBuiltinKernel: appended once each under the registry's lock,
// read without it (a slot is published by the release store of the count).
constexpr int kMaxBuiltins = 256;
std::atomic<KernelFn> builtin_fns[kMaxBuiltins];
std::atomic<int> builtin_count{0};

void RegisterBuiltinKernel(const std::string& op, DeviceType device_type, KernelFn fn) {
  Registry& reg = RawRegistry();
  std::unique_lock lock(reg.mu);
  reg.kernels.emplace(std::make_pair(op, device_type), fn);  // a program's own kernel stays
  generation.fetch_add(1, std::memory_order_acq_rel);
  const int n = builtin_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (builtin_fns[i].load(std::memory_order_relaxed) == fn) return;
  }
  if (n == kMaxBuiltins) return;  // not known as built-in: only ever runs the general way
  builtin_fns[n].store(fn, std::memory_order_relaxed);
  builtin_count.store(n + 1, std::memory_order_release);
}

bool IsBuiltinKernel(KernelFn fn) {
  const int n = builtin_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (builtin_fns[i].load(std::memory_order_relaxed) == fn) return true;
  }
  return false;
}

void DeclareOp(const std::string& op) {
  Registry& reg = RawRegistry();
  std::unique_lock lock(reg.mu);
  reg.declared.insert(op);
}

std::vector<std::string> KnownOps() {
  Registry& reg = GetRegistry();
  std::shared_lock lock(reg.mu);
  std::set<std::string> ops = reg.declared;
  for (const auto& [key, fn] : reg.kernels) ops.insert(key.first);
  return std::vector<std::string>(ops.begin(), ops.end());
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
