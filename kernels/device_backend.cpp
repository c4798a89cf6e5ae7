#include "kernels/device_backend.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/builtin_device.h"
#include "kernels/kernel.h"

namespace ofl {

void* DeviceBackend::allocate_host(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
}

void DeviceBackend::deallocate_host(void* ptr, size_t /*bytes*/) { std::free(ptr); }

namespace kernels {
namespace {
struct BackendTable {
  std::mutex mu;
  std::array<std::atomic<DeviceBackend*>, kMaxDeviceTypes> by_type{};
  std::vector<std::shared_ptr<DeviceBackend>> keep;  // every backend ever registered
  // Set by the first GetBackend of a type (the VM making a pool or stream, a transfer): from then
  // on devices of the type hold the backend's memory and streams, so it can no longer be replaced.
  std::array<std::atomic<bool>, kMaxDeviceTypes> used{};
  // The built-in types (builtin_device.h), registered while the library loads and read after.
  std::array<BuiltinDevice, kMaxDeviceTypes> builtin{};
  std::array<bool, kMaxDeviceTypes> is_builtin{};
  std::array<std::once_flag, kMaxDeviceTypes> made;  // a built-in backend is made once
};

BackendTable& Table() {
  // Never destroyed: workers use backends while the process exits.
  static BackendTable* table = new BackendTable();
  return *table;
}

void Install(DeviceType type, std::shared_ptr<DeviceBackend> backend) {
  BackendTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.by_type[static_cast<int>(type)].store(backend.get(), std::memory_order_release);
  t.keep.push_back(std::move(backend));
}

// A program's own backend, refused once a device of its type was used (under the table's lock,
// so that a first use racing with the registration sees either the old backend or the new one).
void InstallUnused(const std::string& name, DeviceType type,
                   std::shared_ptr<DeviceBackend> backend) {
  BackendTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.used[static_cast<int>(type)].load(std::memory_order_acquire)) {
    throw InvalidArgument("register_device_backend: device type '" + name +
                          "' is in use already (its devices hold memory and streams of the backend "
                          "registered before); register a backend before the first use of its "
                          "devices");
  }
  t.by_type[static_cast<int>(type)].store(backend.get(), std::memory_order_release);
  t.keep.push_back(std::move(backend));
}
}  // namespace

void RegisterBuiltinDevice(const BuiltinDevice& entry) {
  const int v = static_cast<int>(entry.type);
  BackendTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.builtin[v] = entry;
  t.is_builtin[v] = true;
}

const BuiltinDevice* FindBuiltinDevice(DeviceType type) {
  const int v = static_cast<int>(type);
  if (v < 0 || v >= kMaxDeviceTypes || !Table().is_builtin[v]) return nullptr;
  return &Table().builtin[v];
}

DeviceBackend* TryGetBackend(DeviceType type) {
  const int v = static_cast<int>(type);
  if (v < 0 || v >= kMaxDeviceTypes) return nullptr;
  BackendTable& t = Table();
  DeviceBackend* b = t.by_type[v].load(std::memory_order_acquire);
  if (b == nullptr && t.is_builtin[v] && t.builtin[v].make != nullptr) {
    std::call_once(t.made[v], [&t, type, v] { Install(type, t.builtin[v].make()); });
    b = t.by_type[v].load(std::memory_order_acquire);
  }
  return b;
}

DeviceBackend* GetBackend(DeviceType type) {
  DeviceBackend* b = TryGetBackend(type);
  if (b != nullptr) {
    std::atomic<bool>& used = Table().used[static_cast<int>(type)];
    if (!used.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(Table().mu);
      b = Table().by_type[static_cast<int>(type)].load(std::memory_order_acquire);
      used.store(true, std::memory_order_release);
    }
  }
  if (b == nullptr) {
    const BuiltinDevice* builtin = FindBuiltinDevice(type);
    if (builtin != nullptr && builtin->missing != nullptr) throw DeviceError(builtin->missing);
    throw DeviceError(to_string(type) +
                      ": no device backend is registered for this device type (register one "
                      "with ofl::register_device_backend)");
  }
  return b;
}

std::string BackendTypeNames() {
  // The built-in types this build has, without making their backends (a program that never names
  // cuda never calls the CUDA runtime), then the program's own.
  BackendTable& t = Table();
  std::vector<const BuiltinDevice*> builtin;
  for (int v = 0; v < kMaxDeviceTypes; ++v) {
    if (t.is_builtin[v] && t.builtin[v].make != nullptr) builtin.push_back(&t.builtin[v]);
  }
  std::sort(builtin.begin(), builtin.end(), [](const BuiltinDevice* a, const BuiltinDevice* b) {
    return a->listed_at < b->listed_at;
  });
  std::string out;
  for (const BuiltinDevice* d : builtin) out += (out.empty() ? "" : ", ") + to_string(d->type);
  for (int v = 0; v < kMaxDeviceTypes; ++v) {
    const DeviceType type = static_cast<DeviceType>(v);
    if (t.is_builtin[v] || !detail::IsRegisteredDeviceType(type)) continue;
    if (t.by_type[v].load(std::memory_order_acquire) != nullptr) {
      out += (out.empty() ? "" : ", ") + to_string(type);
    }
  }
  return out;
}

}  // namespace kernels

int device_count(DeviceType type) {
  DeviceBackend* b = kernels::TryGetBackend(type);
  if (b == nullptr) return 0;
  try {
    return std::max(0, b->device_count());
  } catch (const std::exception&) {
    return 0;
  }
}

std::string device_unavailable_reason(DeviceType type) {
  DeviceBackend* b = kernels::TryGetBackend(type);
  if (b == nullptr) {
    try {
      kernels::GetBackend(type);
    } catch (const DeviceError& e) {
      return e.what();
    }
    return to_string(type) + ": no device backend is registered for this device type";
  }
  try {
    if (b->device_count() > 0) return {};
    const std::string reason = b->unavailable_reason();
    return reason.empty() ? to_string(type) + ": no device of this type is present" : reason;
  } catch (const std::exception& e) {
    return to_string(type) + ": device_count() failed: " + e.what();
  }
}

void register_device_backend(const std::string& type, std::shared_ptr<DeviceBackend> backend) {
  if (!backend) {
    throw InvalidArgument("register_device_backend: the backend for device type '" + type +
                          "' is null");
  }
  DeviceType builtin_type;
  if (find_device_type(type, &builtin_type) &&
      kernels::FindBuiltinDevice(builtin_type) != nullptr) {
    throw InvalidArgument("register_device_backend: the " + type +
                          " backend is built in and cannot be replaced; register your backend "
                          "under a name of its own");
  }
  const DeviceType t = detail::RegisterDeviceTypeName(type);
  kernels::InstallUnused(type, t, std::move(backend));
}

void register_kernel(const std::string& op, const std::string& device_type, KernelFn fn) {
  if (fn == nullptr) {
    throw InvalidArgument("register_kernel: the kernel for op '" + op + "' on device type '" +
                          device_type + "' is null");
  }
  if (op.empty()) throw InvalidArgument("register_kernel: the op name is empty");
  DeviceType t;
  if (!find_device_type(device_type, &t) || kernels::TryGetBackend(t) == nullptr) {
    throw InvalidArgument("register_kernel: device type '" + device_type +
                          "' has no backend; register it with register_device_backend first" +
                          " (device types with a backend: " + kernels::BackendTypeNames() + ")");
  }
  const std::vector<std::string> ops = kernels::KnownOps();
  if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
    std::string known;
    for (const std::string& o : ops) known += (known.empty() ? "" : ", ") + o;
    throw InvalidArgument("register_kernel: there is no op named '" + op + "' (ops: " + known +
                          ")");
  }
  kernels::RegisterKernel(op, t, fn);
}

}  // namespace ofl
