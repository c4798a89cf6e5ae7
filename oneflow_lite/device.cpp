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

std::string Device::str() const { return to_string(type_) + ":" + std::to_string(index_); }

std::string to_string(DeviceType type) { return type == DeviceType::kCPU ? "cpu" : "cuda"; }

}  // namespace ofl
