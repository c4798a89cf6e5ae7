// Computes and prints the per-rank summary (see rank_summary.h).
#include "tools/vm_trace/rank_summary.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "tools/vm_trace/global_trace.h"
#include "tools/vm_trace/summary.h"

namespace ofl::vm_trace {

bool HasRankSummary(const TraceModel& model) {
  if (model.merged()) return true;
  return std::any_of(model.instrs.begin(), model.instrs.end(),
                     [](const TraceInstr& in) { return IsCollective(in); });
}

RankSummary SummarizeRanks(const TraceModel& model) {
  RankSummary s;
  s.merged = model.merged();
  const std::vector<RankRef> ranks = RanksOf(model);
  const std::vector<CollectiveGroup> groups = PairCollectives(ranks);

  // Each collective record's wait (0 when its group is incomplete), by rank and instruction.
  std::map<std::pair<int, const TraceInstr*>, const CollectiveMember*> member_of;
  std::map<int, int64_t> arrived_last;
  for (const CollectiveGroup& g : groups) {
    ++s.groups;
    if (!g.complete()) continue;
    ++s.complete;
    for (const CollectiveMember& m : g.members) member_of[{m.rank, m.instr}] = &m;
    if (g.members.size() >= 2) {
      ++arrived_last[g.last_rank];
      s.longest_waits.push_back({g.op, g.last_rank, g.total_wait_us()});
    }
  }
  std::stable_sort(s.longest_waits.begin(), s.longest_waits.end(),
                   [](const CollectiveWait& a, const CollectiveWait& b) {
                     return a.total_wait_us > b.total_wait_us;
                   });
  s.longest_waits.erase(
      std::remove_if(s.longest_waits.begin(), s.longest_waits.end(),
                     [](const CollectiveWait& w) { return w.total_wait_us <= 0; }),
      s.longest_waits.end());
  if (s.longest_waits.size() > 5) s.longest_waits.resize(5);

  double begin = std::numeric_limits<double>::infinity();
  double end = -std::numeric_limits<double>::infinity();
  std::set<std::string> hosts;
  for (const RankRef& r : ranks) {
    hosts.insert(r.host);
    RankStats st;
    st.rank = r.rank;
    st.host = r.host;
    st.instructions = static_cast<int64_t>(r.model->instrs.size());
    st.arrived_last = arrived_last[r.rank];
    std::vector<std::pair<double, double>> busy;
    for (const TraceInstr& in : r.model->instrs) {
      begin = std::min({begin, in.issue, in.start});
      end = std::max(end, in.end);
      if (!IsCollective(in)) {
        busy.emplace_back(in.start, in.end);
        continue;
      }
      ++st.collectives;
      st.collective_us += in.duration();
      auto m = member_of.find({r.rank, &in});
      const double wait = m != member_of.end() ? m->second->wait_us : 0;
      if (m == member_of.end()) ++st.unpaired;
      st.wait_us += wait;
      if (wait > st.max_wait_us) {
        st.max_wait_us = wait;
        st.max_wait_op = in.op;
      }
      busy.emplace_back(in.start + wait, in.end);
    }
    st.busy_us = UnionLength(std::move(busy));
    s.ranks.push_back(std::move(st));
  }
  s.span_us = end > begin ? end - begin : 0;
  for (RankStats& st : s.ranks) {
    st.busy_fraction = s.span_us > 0 ? std::min(1.0, st.busy_us / s.span_us) : 0;
  }
  s.hosts_differ = hosts.size() > 1;
  return s;
}

void PrintRankSummary(const RankSummary& s, std::FILE* out) {
  if (s.merged) {
    std::fprintf(out,
                 "\n== ranks: %zu process(es) over %.1f us (every rank's times on one "
                 "steady_clock origin)\n",
                 s.ranks.size(), s.span_us);
  } else {
    std::fprintf(out, "\n== ranks: one process (rank 0 only) over %.1f us\n", s.span_us);
  }
  std::fprintf(out, "%-6s %8s %12s %7s %12s %15s %12s %7s %13s\n", "rank", "instrs", "busy",
               "busy %", "collectives", "in collectives", "waiting", "wait %", "arrived last");
  for (const RankStats& r : s.ranks) {
    std::fprintf(out, "%-6d %8lld %9.1f us %6.1f%% %12lld %12.1f us %9.1f us %6.1f%% %13lld\n",
                 r.rank, static_cast<long long>(r.instructions), r.busy_us, 100.0 * r.busy_fraction,
                 static_cast<long long>(r.collectives), r.collective_us, r.wait_us,
                 s.span_us > 0 ? 100.0 * r.wait_us / s.span_us : 0.0,
                 static_cast<long long>(r.arrived_last));
  }
  std::fprintf(out,
               "busy: run time of its non-collective instructions and of its collectives' "
               "transfers (after the last\n"
               "rank arrived); waiting: in each collective, the last rank's start - its own start; "
               "wait %% is of the span\n");
  std::fprintf(out, "\ncollectives: %lld distinct, %lld recorded by every rank of their list",
               static_cast<long long>(s.groups), static_cast<long long>(s.complete));
  if (s.groups > s.complete) {
    std::fprintf(out,
                 ", %lld not (their other ranks' records are not in this trace: they count as "
                 "busy, no wait)",
                 static_cast<long long>(s.groups - s.complete));
  }
  std::fprintf(out, "\n");
  for (const RankStats& r : s.ranks) {
    if (r.max_wait_us > 0) {
      std::fprintf(out, "  rank %d waited longest in %s: %.1f us\n", r.rank, r.max_wait_op.c_str(),
                   r.max_wait_us);
    }
  }
  if (!s.longest_waits.empty()) std::fprintf(out, "longest waits (summed over the ranks):\n");
  for (const CollectiveWait& w : s.longest_waits) {
    std::fprintf(out, "  %-48s %9.1f us, waiting for rank %d\n", w.op.c_str(), w.total_wait_us,
                 w.last_rank);
  }
  if (s.hosts_differ) {
    std::fprintf(out, "note: the ranks ran on different hosts (");
    bool first = true;
    std::set<std::string> hosts;
    for (const RankStats& r : s.ranks) hosts.insert(r.host);
    for (const std::string& h : hosts) {
      std::fprintf(out, "%s%s", first ? "" : ", ", h.empty() ? "?" : h.c_str());
      first = false;
    }
    std::fprintf(out,
                 "): their clocks are not aligned, so times across hosts (and the waits) are "
                 "approximate at best\n");
  }
}

}  // namespace ofl::vm_trace
