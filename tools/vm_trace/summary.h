// The summary of a trace: what ran (counts and issue->end latency percentiles per op), how busy
// each stream was, the critical path through the dependence edges, and what the caching pool did
// (hit rate, peaks, fragmentation). Computed from a TraceModel, printed as plain text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {

struct OpStats {
  std::string op;  // a collective's without its sequence number (OpFamily)
  int64_t count = 0;
  int64_t errors = 0;
  double p50_latency_us = 0;  // issue -> end
  double p99_latency_us = 0;
  double p50_run_us = 0;  // start -> end
  double total_run_us = 0;
};

struct LaneStats {
  std::string name;
  int64_t instructions = 0;
  double busy_us = 0;        // union of the lane's X intervals
  double busy_fraction = 0;  // busy_us / the trace's span, in [0, 1]
};

// The heaviest chain of instructions linked by dependence edges, weighted by run time.
struct CriticalPath {
  double run_us = 0;          // sum of the run times on the path
  std::vector<uint64_t> ids;  // in execution order; each depends on the one before it
};

struct PoolStats {
  std::string device;
  int64_t allocs = 0, hits = 0, frees = 0, segment_allocs = 0, segment_frees = 0;
  double hit_rate = -1;     // hits / allocs; -1 when nothing was allocated
  bool has_memory = false;  // whether allocated/reserved were recorded
  int64_t peak_allocated = 0, peak_reserved = 0;
  int64_t end_allocated = 0, end_reserved = 0;
  // The largest free range inside the pool's segments at the end: the biggest request the cache
  // could serve without growing. -1 when the trace lacks the addresses (or segments) to tell.
  int64_t largest_free_block = -1;
  int64_t fragmentation() const { return end_reserved - end_allocated; }  // cached, unused bytes
};

struct Summary {
  int64_t instructions = 0;
  int64_t errors = 0;
  int64_t dep_edges = 0;
  int64_t cross_stream_edges = 0;
  double span_us = 0;            // earliest issue to latest end
  std::vector<OpStats> ops;      // most frequent first
  std::vector<LaneStats> lanes;  // in lane (stream) order
  CriticalPath critical_path;
  std::vector<PoolStats> pools;  // one per device
};

// Total length of the union of [start, end) intervals.
double UnionLength(std::vector<std::pair<double, double>> intervals);

// Nearest-rank percentile (p in [0, 100]) of unsorted values; 0 for none.
double Percentile(std::vector<double> values, double p);

Summary Summarize(const TraceModel& model);
// At most `max_path_lines` lines list the critical path (its middle is elided when longer).
void PrintSummary(const Summary& summary, const TraceModel& model, std::FILE* out,
                  size_t max_path_lines = 24);

}  // namespace ofl::vm_trace
