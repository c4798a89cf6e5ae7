#include "oneflow_lite/device.h"

#include <array>
#include <atomic>
#include <charconv>
#include <mutex>

#include "oneflow_lite/error.h"
#include "oneflow_lite/identifier.h"

namespace ofl {

namespace {
// Names by type value. Entries are written once, under the mutex, before the count that publishes
// them; readers load the count (acquire) and then read without the lock.
struct TypeNames {
  std::mutex mu;
  std::array<std::string, kMaxDeviceTypes> names;
  std::atomic<int> count{0};
  TypeNames() {
    names[0] = "cpu";
    names[1] = "cuda";
    names[2] = "sim";
    count.store(3, std::memory_order_release);
  }
};

TypeNames& Names() {
  static TypeNames* names = new TypeNames();  // never destroyed: used while the process exits
  return *names;
}

std::string KnownTypes() {
  TypeNames& t = Names();
  const int n = t.count.load(std::memory_order_acquire);
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? ", " : "") + std::string("\"") + t.names[i] + "[:N]\"";
  return out;
}

bool IsIdentifier(const std::string& name) { return name.size() <= 32 && IsLowerIdentifier(name); }
}  // namespace

bool find_device_type(std::string_view name, DeviceType* type) {
  TypeNames& t = Names();
  const int n = t.count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (t.names[i] == name) {
      *type = static_cast<DeviceType>(i);
      return true;
    }
  }
  return false;
}

namespace detail {
DeviceType RegisterDeviceTypeName(const std::string& name) {
  if (!IsIdentifier(name)) {
    throw InvalidArgument("register_device_backend: device type name '" + name +
                          "' is not a lower-case identifier ([a-z][a-z0-9_]*, at most 32 chars)");
  }
  TypeNames& t = Names();
  std::lock_guard<std::mutex> lock(t.mu);
  DeviceType found;
  if (find_device_type(name, &found)) return found;
  const int n = t.count.load(std::memory_order_relaxed);
  if (n >= kMaxDeviceTypes) {
    throw InvalidArgument("register_device_backend: cannot register device type '" + name +
                          "': all " + std::to_string(kMaxDeviceTypes) +
                          " device type slots are taken");
  }
  t.names[n] = name;
  t.count.store(n + 1, std::memory_order_release);
  return static_cast<DeviceType>(n);
}

bool IsRegisteredDeviceType(DeviceType type) {
  const int v = static_cast<int>(type);
  return v >= 0 && v < Names().count.load(std::memory_order_acquire);
}
}  // namespace detail

Device::Device(std::string_view spec) {
  const std::string_view original = spec;
  auto bad = [&](const std::string& why) {
    return InvalidArgument("Device: invalid device string '" + std::string(original) + "': " + why +
                           " (expected one of " + KnownTypes() + ")");
  };
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  if (!find_device_type(name, &type_)) {
    throw bad("unknown device type '" + std::string(name) + "'");
  }
  index_ = 0;
  if (colon != std::string_view::npos) {
    const std::string_view idx = spec.substr(colon + 1);
    int value = -1;
    auto [ptr, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), value);
    if (idx.empty() || ec != std::errc() || ptr != idx.data() + idx.size() || value < 0) {
      throw bad("index '" + std::string(idx) + "' is not a non-negative integer");
    }
    index_ = value;
  }
  if (type_ == DeviceType::kCPU && index_ != 0) throw bad("only cpu:0 exists");
}

Device::Device(DeviceType type, int index) : type_(type), index_(index) {
  if (type != DeviceType::kCPU && !detail::IsRegisteredDeviceType(type)) {
    throw InvalidArgument("Device: device type value " + std::to_string(static_cast<int>(type)) +
                          " is not a registered DeviceType (valid: 0.." +
                          std::to_string(Names().count.load(std::memory_order_acquire) - 1) + ": " +
                          KnownTypes() + ")");
  }
  if (index < 0) {
    throw InvalidArgument("Device: " + str() + " has a negative index " + std::to_string(index) +
                          " (device indices are >= 0)");
  }
  if (type == DeviceType::kCPU && index != 0) {
    throw InvalidArgument("Device: " + str() + " does not exist: only cpu:0 exists");
  }
}

std::string Device::str() const { return to_string(type_) + ":" + std::to_string(index_); }

std::string to_string(DeviceType type) {
  if (detail::IsRegisteredDeviceType(type)) return Names().names[static_cast<int>(type)];
  return "unknown device type " + std::to_string(static_cast<int>(type));
}

}  // namespace ofl
