// The per-rank part of a trace's summary: for each rank of a merged multi-process trace (or the one
// process of a trace that ran collectives) how busy it was and how long it waited in collectives
// for the other ranks, and which collectives were waited on longest. Computed from a TraceModel.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {

struct RankStats {
  int rank = 0;
  std::string host;
  int64_t instructions = 0;
  int64_t collectives = 0;   // its collective instructions
  int64_t unpaired = 0;      // of those, in no complete group (a peer's record is missing)
  int64_t arrived_last = 0;  // collectives of 2+ ranks it started last (the others waited for it)
  // The union of its non-collective instructions' run time and its collectives' transfer part
  // (from the last rank's arrival to the end); an unpaired collective counts whole.
  double busy_us = 0;
  double busy_fraction = 0;  // busy_us / the common span, in [0, 1]
  double collective_us = 0;  // its collectives' run time (waiting + transfer)
  // For each collective: the latest start among its ranks - this rank's start, within [0, its
  // run time]; summed.
  double wait_us = 0;
  double max_wait_us = 0;
  std::string max_wait_op;  // the collective it waited longest in
};

struct CollectiveWait {
  std::string op;
  int last_rank = -1;        // the rank the others waited for
  double total_wait_us = 0;  // summed over its ranks
};

struct RankSummary {
  double span_us = 0;  // the earliest issue to the latest end, over every rank
  std::vector<RankStats> ranks;
  int64_t groups = 0;                         // distinct collectives
  int64_t complete = 0;                       // of those, recorded by every rank of their list
  std::vector<CollectiveWait> longest_waits;  // at most 5, longest total wait first
  bool hosts_differ = false;  // the ranks ran on different hosts: their clocks are not aligned
  bool merged = false;        // the trace held several ranks
};

// Whether a trace has anything for the per-rank summary: it is merged or it ran collectives.
bool HasRankSummary(const TraceModel& model);
RankSummary SummarizeRanks(const TraceModel& model);
void PrintRankSummary(const RankSummary& summary, std::FILE* out);

}  // namespace ofl::vm_trace
