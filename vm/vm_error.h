// VmError: an error raised inside the VM (a kernel throwing, OOM in Prepare), kept with the op name
// and instruction id so that the next wait touching it can re-throw it with its original type.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

namespace ofl::vm {

enum class ErrorKind { kGeneric, kInvalidArgument, kOutOfMemory, kDevice };

struct VmError {
  ErrorKind kind = ErrorKind::kGeneric;
  std::string op_name;
  uint64_t instruction_id = 0;
  std::string message;  // full message: names the op, the instruction and the cause
  std::atomic<bool> reported{false};

  // Throws the ofl exception type that matches `kind`, with the message (plus `suffix`).
  [[noreturn]] void Throw(const std::string& suffix = std::string()) const;
};

using VmErrorPtr = std::shared_ptr<VmError>;

// The kind an exception caught inside the VM is kept as, so that its wait re-throws that type.
ErrorKind ErrorKindOf(const std::exception& e);

}  // namespace ofl::vm
