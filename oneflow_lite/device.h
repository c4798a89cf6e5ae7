// Device: where a tensor lives ("cpu", "cpu:0", "cuda", "cuda:1").
#pragma once

#include <string>
#include <string_view>

namespace ofl {

enum class DeviceType { kCPU, kCUDA };

class Device {
 public:
  // Throws InvalidArgument naming the spec when it is not "cpu[:N]" or "cuda[:N]".
  Device(std::string_view spec);  // NOLINT(google-explicit-constructor): Device("cuda:1") and "cpu"
                                  // both read well
  Device(const char* spec)
      : Device(std::string_view(spec)) {}  // NOLINT(google-explicit-constructor)
  // Throws InvalidArgument, as the string form does, for a type outside DeviceType, a negative
  // index or a CPU index other than 0: the VM indexes its stream table by both.
  Device(DeviceType type, int index);

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  std::string str() const;
  bool is_cpu() const { return type_ == DeviceType::kCPU; }
  bool is_cuda() const { return type_ == DeviceType::kCUDA; }

  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }

 private:
  DeviceType type_ = DeviceType::kCPU;
  int index_ = 0;
};

// "cpu" or "cuda"; a value outside the enum reads "unknown device type N".
std::string to_string(DeviceType type);

}  // namespace ofl
