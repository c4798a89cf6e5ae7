// A standalone SVG picture of a trace: a lane per stream with a box per instruction (hover shows
// op, id, policy and times), and the memory curves (allocated, reserved) of each device under the
// lanes. Needs no viewer: any browser opens it.
#pragma once

#include <ostream>
#include <string>

#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {

struct SvgOptions {
  int width = 1400;  // pixels, lanes and plots alike
  std::string title = "oneflow_lite VM trace";
};

// Each lane is a <g class="lane" data-stream="NAME">, each box a <rect class="instr"> holding a
// <title>, each memory plot a <g class="memory" data-device="DEVICE">.
void WriteSvg(const TraceModel& model, std::ostream& out, const SvgOptions& options = {});
// Writes to a file; throws TraceError when it cannot be written.
void WriteSvgFile(const TraceModel& model, const std::string& path, const SvgOptions& options = {});

// Escapes &, <, >, " and ' for XML text and attribute values.
std::string XmlEscape(const std::string& s);

}  // namespace ofl::vm_trace
