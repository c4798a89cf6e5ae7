// Device: where a tensor lives ("cpu", "cpu:0", "cuda:1", "sim:0", or "mydev:2" for a device type
// a program registered through oneflow_lite/extension.h).
#pragma once

#include <string>
#include <string_view>

namespace ofl {

// The built-in device types; a type registered at run time (register_device_backend) gets the
// next free value, up to kMaxDeviceTypes in all. "sim" is the simulated asynchronous accelerator
// shipped with the library (its backend is made on first use).
enum class DeviceType : int { kCPU = 0, kCUDA = 1, kSim = 2 };
inline constexpr int kMaxDeviceTypes = 16;

class Device {
 public:
  // Throws InvalidArgument naming the spec when it is not "<type>[:N]" for a known device type.
  Device(std::string_view spec);  // NOLINT(google-explicit-constructor): Device("cuda:1") and "cpu"
                                  // both read well
  Device(const char* spec)
      : Device(std::string_view(spec)) {}  // NOLINT(google-explicit-constructor)
  // Throws InvalidArgument, as the string form does, for a type that is not registered, a negative
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

// The type's name ("cpu", "cuda", "sim", "mydev"); an unregistered value reads
// "unknown device type N".
std::string to_string(DeviceType type);

// How many devices of `type` this process can use (torch.cuda.device_count()): 1 for cpu; 0 when
// the type has no backend in this build (cuda built without CUDA) or none is present. Errors of
// the backend's probe count as 0 too, and device_unavailable_reason says why.
int device_count(DeviceType type);
// Why device_count(type) is 0, in the backend's words ("no CUDA device is available: CUDA driver
// version is insufficient for CUDA runtime version (...)", "this oneflow_lite was built without
// CUDA ..."); empty when devices are present.
std::string device_unavailable_reason(DeviceType type);

// The device type registered under `name`; false when there is none.
bool find_device_type(std::string_view name, DeviceType* type);

namespace detail {
// The type named `name`, registering the name when it is new. Throws InvalidArgument for a name
// that is not a lower-case identifier or when kMaxDeviceTypes are registered already.
DeviceType RegisterDeviceTypeName(const std::string& name);
// Whether `type` is a registered value.
bool IsRegisteredDeviceType(DeviceType type);
}  // namespace detail

}  // namespace ofl
