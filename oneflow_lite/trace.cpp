// ofl::trace: the public switch for the VM's tracing and the Chrome trace writer.
#include "oneflow_lite/trace.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "oneflow_lite/error.h"
#include "vm/chrome_trace.h"
#include "vm/virtual_machine.h"

namespace ofl::trace {

void start() { vm::VirtualMachine::Get().StartTraceSession(); }

void stop(const std::string& path) {
  // Open first: a path that cannot be written leaves the recording running for another try.
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw InvalidArgument("trace::stop: cannot open '" + path +
                          "' for writing: " + std::strerror(errno) + " (tracing is still on)");
  }
  const std::string text = vm::ToChromeTraceJson(vm::VirtualMachine::Get().StopTraceSession());
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    throw InvalidArgument("trace::stop: writing '" + path + "' failed: " + std::strerror(errno));
  }
}

bool is_tracing() { return vm::VirtualMachine::Get().tracing(); }

}  // namespace ofl::trace
