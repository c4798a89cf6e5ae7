#include "oneflow_lite/device.h"

#include <charconv>

#include "oneflow_lite/error.h"

namespace ofl {

Device::Device(std::string_view spec) {
  const std::string_view original = spec;
  auto bad = [&](const std::string& why) {
    return InvalidArgument("Device: invalid device string '" + std::string(original) + "': " + why +
                           " (expected \"cpu\", \"cpu:N\", \"cuda\" or \"cuda:N\")");
  };
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  if (name == "cpu") {
    type_ = DeviceType::kCPU;
  } else if (name == "cuda") {
    type_ = DeviceType::kCUDA;
  } else {
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
  if (type != DeviceType::kCPU && type != DeviceType::kCUDA) {
    throw InvalidArgument(
        "Device: device type value " + std::to_string(static_cast<int>(type)) +
        " is not a DeviceType (valid: " + std::to_string(static_cast<int>(DeviceType::kCPU)) +
        ".." + std::to_string(static_cast<int>(DeviceType::kCUDA)) + ")");
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
  switch (type) {
    case DeviceType::kCPU:
      return "cpu";
    case DeviceType::kCUDA:
      return "cuda";
  }
  return "unknown device type " + std::to_string(static_cast<int>(type));
}

}  // namespace ofl
