// TraceRecorder: records what the VM does between Start() and Stop() and hands back the trace as
// ofl-trace-1 JSON text. The one place in the tool that knows how the library records a trace
// (the VM's trace session and vm/chrome_trace.h's writer).
#pragma once

#include <cstdint>
#include <string>

namespace ofl::vm_trace {

class TraceRecorder {
 public:
  // Waits for earlier work (re-throwing an error it left), then starts a fresh trace session.
  void Start();
  // Waits for the work issued while recording, ends the session and returns the trace. An error
  // raised inside that work stays in the trace (and for the next sync to report).
  std::string Stop();
  // When the last stopped session started: an absolute steady_clock time in nanoseconds (the
  // origin of its times), which processes on one host share.
  int64_t origin_ns() const { return origin_ns_; }

 private:
  int64_t origin_ns_ = 0;
};

}  // namespace ofl::vm_trace
