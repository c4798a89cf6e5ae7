// Recording what the VM did, for Perfetto (ui.perfetto.dev), chrome://tracing or `ofl_vm_trace
// summarize`: every instruction (op, stream, the tensors it read and wrote, what it waited for,
// when it was issued, became ready, started and ended), every allocation and free of the caching
// pools, and allocated / reserved bytes over time. The file is Chrome Trace Event JSON in the
// "ofl-trace-1" layout (vm/TRACE_FORMAT.md in the source tree).
//
// Any program can also be traced without a code change: OFL_TRACE=out.json starts tracing when
// the runtime starts and writes the file when the process exits.
#pragma once

#include <string>

namespace ofl::trace {

// Starts recording, dropping whatever an earlier recording left. Recording is off by default and
// then costs nothing measurable.
void start();

// Stops recording, waits for the work issued while it was on (an error raised inside that work is
// left for the next sync to report; work stuck for OFL_VM_TIMEOUT_SECONDS is left out of the
// trace) and writes the trace to `path`. Throws ofl::InvalidArgument naming the path when the file
// cannot be opened for writing (recording then goes on, for another try). Without a start() it
// writes an empty trace.
void stop(const std::string& path);

// Whether recording is on (start() or OFL_TRACE).
bool is_tracing();

}  // namespace ofl::trace
