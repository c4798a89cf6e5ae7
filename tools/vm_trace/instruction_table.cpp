// Prints the per-instruction table (see instruction_table.h).
#include "tools/vm_trace/instruction_table.h"

#include <string>
#include <vector>

namespace ofl::vm_trace {
namespace {

std::string Ids(const char* prefix, const std::vector<uint64_t>& ids) {
  if (ids.empty()) return "-";
  std::string s;
  for (uint64_t id : ids) s += (s.empty() ? "" : ",") + std::string(prefix) + std::to_string(id);
  return s;
}

}  // namespace

void PrintInstructionTable(const TraceModel& model, std::FILE* out) {
  if (model.instrs.empty()) return;
  std::fprintf(out, "\n%-5s %-20s %-16s %-15s %-8s %-8s %-20s %-14s %-10s %s\n", "id", "policy",
               "op", "stream", "reads", "writes", "waited for", "allocation", "then frees",
               "issue -> ready -> start -> end (us)");
  for (const TraceInstr& r : model.instrs) {
    std::string waited;
    for (size_t i = 0; i < r.deps.size(); ++i) {
      waited += (waited.empty() ? "" : ",") + std::string("#") + std::to_string(r.deps[i]) +
                (r.cross_stream[i] ? "(event)" : "(fifo)");
    }
    if (waited.empty()) waited = "-";
    std::string alloc;
    for (const TraceAlloc& a : r.allocs) {
      alloc +=
          (alloc.empty() ? "" : ",") + std::to_string(a.bytes) + "B " + (a.hit ? "hit" : "miss");
    }
    if (alloc.empty()) alloc = "-";
    std::fprintf(out,
                 "#%-4llu %-20s %-16s %-15s %-8s %-8s %-20s %-14s %-10s %.1f -> %.1f -> %.1f -> "
                 "%.1f%s%s%s%s\n",
                 static_cast<unsigned long long>(r.id), r.policy.c_str(), r.op.c_str(),
                 r.stream.c_str(), Ids("b", r.reads).c_str(), Ids("b", r.writes).c_str(),
                 waited.c_str(), alloc.c_str(), Ids("b", r.frees).c_str(), r.issue, r.ready,
                 r.start, r.end, r.attrs.empty() ? "" : "  ", r.attrs.c_str(),
                 r.error.empty() ? "" : "  ERROR: ", r.error.c_str());
  }
}

}  // namespace ofl::vm_trace
