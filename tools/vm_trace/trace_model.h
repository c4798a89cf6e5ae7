// TraceModel: an "ofl-trace-1" Chrome trace read back into plain structs (instructions, stream
// lanes, memory counters, pool events), so that the table, the summary and the SVG timeline work
// the same on a trace this tool just recorded and on one any program wrote with OFL_TRACE. A merged
// multi-process trace (ofl_vm_trace --workload global under mpiexec) reads as one model per rank.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ofl::vm_trace {

// The text or file is not a trace this tool can read. The message says which file and why.
class TraceError : public std::runtime_error {
 public:
  explicit TraceError(const std::string& msg) : std::runtime_error(msg) {}
};

struct TraceAlloc {
  uint64_t blob = 0;
  int64_t bytes = 0;
  bool hit = false;
};

// One "X" event. Times are microseconds since the trace started. A trace from another producer may
// lack the ofl args; then issue == ready == start and the id is the event's position.
struct TraceInstr {
  uint64_t id = 0;
  std::string op;
  std::string policy;
  std::string stream;  // the lane's name
  int64_t tid = 0;
  double issue = 0, ready = 0, start = 0, end = 0;  // end: launched
  double complete = 0;  // its work finished on the device (== end on a synchronous device)
  std::vector<uint64_t> reads, writes, deps;
  std::vector<bool> cross_stream;  // parallel to deps
  std::vector<TraceAlloc> allocs;
  std::vector<uint64_t> frees;
  std::string error;  // empty when it succeeded
  std::string attrs;  // the op call's attributes by name; empty for none

  double duration() const { return end - start; }
  double latency() const { return end - issue; }  // issue -> end
};

// A lane: a track that holds instructions (a VM stream).
struct TraceLane {
  int64_t tid = 0;
  std::string name;
};

struct MemorySample {
  double ts = 0;
  int64_t allocated = 0;
  int64_t reserved = 0;
};

struct PoolEvent {
  std::string kind;  // alloc, free, segment_alloc, segment_free
  double ts = 0;
  int64_t bytes = 0;
  bool hit = false;  // alloc only
  uint64_t blob = 0;
  uint64_t address = 0;  // the block's or segment's address; 0 when the trace does not say
  std::string owner;
  int64_t allocated = -1, reserved = -1;  // -1 when the event did not say
};

struct RankModel;

struct TraceModel {
  std::string format;                                       // otherData.format, empty when absent
  std::string version;                                      // otherData.version
  std::vector<TraceLane> lanes;                             // by tid
  std::vector<TraceInstr> instrs;                           // by id
  std::map<std::string, std::vector<MemorySample>> memory;  // device -> samples by time
  std::map<std::string, std::vector<PoolEvent>> pool;       // device -> events by time
  // A merged trace (a process named "rank N" per rank): each rank's model, by rank, its times on
  // the common origin; the fields above (but format and version) are then empty.
  std::vector<RankModel> ranks;

  bool merged() const { return !ranks.empty(); }
  // Index into instrs of an instruction id, or -1 when the trace does not hold it.
  int64_t IndexOf(uint64_t id) const;
  // From the earliest issue (or start) to the latest end, in microseconds.
  double begin() const;
  double finish() const;
};

struct RankModel {
  int rank = 0;
  std::string host;  // from otherData.ranks; empty when the trace does not say
  TraceModel model;
};

// Parses ofl-trace-1 JSON (or any Chrome trace: an object with "traceEvents", or a bare array of
// events). `source` names the text in error messages (a path).
TraceModel ParseTrace(const std::string& text, const std::string& source = "<trace>");
// Reads and parses a file. Throws TraceError for a missing, unreadable or invalid file.
TraceModel LoadTrace(const std::string& path);

}  // namespace ofl::vm_trace
