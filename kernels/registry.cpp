#include <atomic>
#include <cstddef>
#include <cstdint>
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

namespace {
// The built-in kernel functions, for IsBuiltinKernel (asked once per op call on the direct path):
// an open-addressing set of function pointers, inserted under the registry's lock and read
// without it (a slot is written once, by a release store, and never cleared). At most half full,
// so a lookup probes a slot or two.
constexpr size_t kBuiltinSlots = 512;
constexpr int kMaxBuiltins = static_cast<int>(kBuiltinSlots / 2);
std::atomic<KernelFn> builtin_fns[kBuiltinSlots];
int builtin_count = 0;  // under the registry's lock

size_t BuiltinSlot(KernelFn fn) {
  uint64_t h = reinterpret_cast<uintptr_t>(fn);
  h ^= h >> 17;
  h *= 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 40) & (kBuiltinSlots - 1);
}
}  // namespace

void RegisterBuiltinKernel(const std::string& op, DeviceType device_type, KernelFn fn) {
  Registry& reg = RawRegistry();
  std::unique_lock lock(reg.mu);
  reg.kernels.emplace(std::make_pair(op, device_type), fn);  // a program's own kernel stays
  generation.fetch_add(1, std::memory_order_acq_rel);
  if (builtin_count == kMaxBuiltins) return;  // not known as built-in: runs the general way
  for (size_t i = BuiltinSlot(fn);; i = (i + 1) & (kBuiltinSlots - 1)) {
    KernelFn cur = builtin_fns[i].load(std::memory_order_relaxed);
    if (cur == fn) return;
    if (cur == nullptr) {
      builtin_fns[i].store(fn, std::memory_order_release);
      ++builtin_count;
      return;
    }
  }
}

bool IsBuiltinKernel(KernelFn fn) {
  if (fn == nullptr) return false;
  for (size_t i = BuiltinSlot(fn);; i = (i + 1) & (kBuiltinSlots - 1)) {
    KernelFn cur = builtin_fns[i].load(std::memory_order_acquire);
    if (cur == fn) return true;
    if (cur == nullptr) return false;
  }
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
