#include "vm/vm_error.h"

#include "oneflow_lite/error.h"

namespace ofl::vm {

void VmError::Throw(const std::string& suffix) const {
  const std::string msg = message + suffix;
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      throw InvalidArgument(msg);
    case ErrorKind::kOutOfMemory:
      throw OutOfMemory(msg);
    case ErrorKind::kDevice:
      throw DeviceError(msg);
    case ErrorKind::kGeneric:
      break;
  }
  throw Error(msg);
}

ErrorKind ErrorKindOf(const std::exception& e) {
  if (dynamic_cast<const OutOfMemory*>(&e) != nullptr) return ErrorKind::kOutOfMemory;
  if (dynamic_cast<const InvalidArgument*>(&e) != nullptr) return ErrorKind::kInvalidArgument;
  if (dynamic_cast<const DeviceError*>(&e) != nullptr) return ErrorKind::kDevice;
  return ErrorKind::kGeneric;
}

}  // namespace ofl::vm
