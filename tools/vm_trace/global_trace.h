// Traces of a multi-process (global tensor) program: each rank records its own trace; rank 0
// merges them into one Chrome trace with a process per rank, on a common time origin, with a flow
// arrow per collective from the rank that arrived last to every rank that waited for it. The same
// collective is found on every rank by its op name, "<kind> #<seq> over [<ranks>]".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {

// A collective instruction's op name taken apart. The pair (seq, ranks) names the same collective
// on every rank of `ranks`.
struct CollectiveName {
  std::string kind;  // "boxing S->B (all-gather)"
  int64_t seq = 0;
  std::vector<int> ranks;
};

// Parses "<kind> #<seq> over [<r0>, <r1>, ...]"; false when `op` is not such a name.
bool ParseCollectiveName(const std::string& op, CollectiveName* out);

// Whether an instruction is a collective (its policy is "Collective").
bool IsCollective(const TraceInstr& in);

// The op name the summary counts an instruction under: a collective's without its sequence number
// ("boxing S->B (all-gather) over [0, 1]"), so that every run of one kind counts together; any
// other instruction's op name unchanged.
std::string OpFamily(const TraceInstr& in);

// One rank's record of a collective.
struct CollectiveMember {
  int rank = 0;
  const TraceInstr* instr = nullptr;  // into that rank's model
  double wait_us = 0;  // the group's latest start - this start, within [0, its duration]
};

// One collective as the ranks that took part recorded it.
struct CollectiveGroup {
  CollectiveName name;
  std::string op;                         // the op name (that of the first member found)
  std::vector<CollectiveMember> members;  // in rank order
  int last_rank = -1;  // the member that started last: the one the others waited for
  double last_start = 0;
  // Every rank of its list has a record (else the trace stopped before, or the ranks' traces
  // are not all there; such a group has no waits).
  bool complete() const { return members.size() == name.ranks.size(); }
  double total_wait_us() const;
};

// A rank's model, without copying it.
struct RankRef {
  int rank = 0;
  std::string host;
  const TraceModel* model = nullptr;
};

// The ranks a trace holds: a merged trace's, or a single-process trace as rank 0.
std::vector<RankRef> RanksOf(const TraceModel& model);

// Pairs the ranks' collective records by (seq, rank list); groups in order of their earliest
// start. Collectives whose op name has no sequence number are left out. The ranks' times must be
// on one origin (a merged trace's are).
std::vector<CollectiveGroup> PairCollectives(const std::vector<RankRef>& ranks);

// One rank's trace as it leaves the rank: its JSON (times since its own trace start), that start
// as an absolute steady_clock time in nanoseconds, and the host it ran on.
struct RankTraceText {
  int rank = 0;
  int64_t origin_ns = 0;
  std::string host;
  std::string json;
};

// Merges the ranks' traces into one ofl-trace-1 document (vm/TRACE_FORMAT.md, "Merged traces"):
// rank r becomes process r + 1 named "rank r", every time is moved onto the earliest trace start,
// flow ids are renumbered to stay unique, and each complete collective gets arrows (cat
// "collective") from its last-arriving rank to every other rank. Throws TraceError for a trace
// that cannot be read or for a rank given twice.
std::string MergeRankTraces(const std::vector<RankTraceText>& ranks);

}  // namespace ofl::vm_trace
