// Exception types thrown by oneflow_lite. Every message names the op, the argument and the values.
#pragma once

#include <stdexcept>
#include <string>

namespace ofl {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// A caller passed an argument the op cannot accept (shape, size, dtype, device, byte count...).
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& msg) : Error(msg) {}
};

// A caching pool could not satisfy a request even after releasing its cached blocks.
class OutOfMemory : public Error {
 public:
  explicit OutOfMemory(const std::string& msg) : Error(msg) {}
};

// A device is missing, unusable or reported a failure.
class DeviceError : public Error {
 public:
  explicit DeviceError(const std::string& msg) : Error(msg) {}
};

}  // namespace ofl
