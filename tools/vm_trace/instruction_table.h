// The per-instruction table: one line per instruction saying what the VM did and why (what it
// waited for, what it allocated, which dead blobs it freed, and its issue/ready/start/end times).
#pragma once

#include <cstdio>

#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {

void PrintInstructionTable(const TraceModel& model, std::FILE* out);

}  // namespace ofl::vm_trace
