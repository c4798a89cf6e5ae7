// Pairs collectives across ranks and merges the ranks' traces (see global_trace.h).
#include "tools/vm_trace/global_trace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace ofl::vm_trace {
namespace {

using nlohmann::json;

// Digits only, at most 18 of them (fits int64): the value; else -1.
int64_t ParseCount(const std::string& s) {
  if (s.empty() || s.size() > 18) return -1;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  return std::stoll(s);
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// Microseconds kept to whole nanoseconds, as the VM's writer has them.
double Ns(double us) { return std::round(us * 1000.0) / 1000.0; }

// The point where a flow arrow leaves or enters an instruction's slice: `t` kept inside
// [start, end], a nanosecond short of the end when it can be, so that viewers bind it to this
// slice and not to the one that follows.
double Inside(const TraceInstr& in, double t) {
  const double last = std::max(in.start, in.end - 0.001);
  return std::min(std::max(t, in.start), last);
}

}  // namespace

bool ParseCollectiveName(const std::string& op, CollectiveName* out) {
  const std::string over = " over [";
  const size_t at = op.rfind(over);
  if (at == std::string::npos || op.empty() || op.back() != ']') return false;
  const size_t hash = op.rfind(" #", at);
  if (hash == std::string::npos) return false;
  CollectiveName name;
  name.kind = op.substr(0, hash);
  name.seq = ParseCount(op.substr(hash + 2, at - hash - 2));
  if (name.seq < 0) return false;
  const std::string list = op.substr(at + over.size(), op.size() - 1 - at - over.size());
  for (size_t pos = 0;;) {
    const size_t comma = list.find(',', pos);
    const int64_t rank =
        ParseCount(Trim(list.substr(pos, comma == std::string::npos ? comma : comma - pos)));
    if (rank < 0 || rank > (int64_t{1} << 30)) return false;
    name.ranks.push_back(static_cast<int>(rank));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (name.ranks.empty()) return false;
  if (out != nullptr) *out = std::move(name);
  return true;
}

bool IsCollective(const TraceInstr& in) { return in.policy == "Collective"; }

std::string OpFamily(const TraceInstr& in) {
  if (!IsCollective(in) || !ParseCollectiveName(in.op, nullptr)) return in.op;
  const size_t at = in.op.rfind(" over [");
  const size_t hash = in.op.rfind(" #", at);
  return in.op.substr(0, hash) + in.op.substr(at);
}

double CollectiveGroup::total_wait_us() const {
  double total = 0;
  for (const CollectiveMember& m : members) total += m.wait_us;
  return total;
}

std::vector<RankRef> RanksOf(const TraceModel& model) {
  std::vector<RankRef> out;
  if (!model.merged()) {
    out.push_back({0, "", &model});
    return out;
  }
  for (const RankModel& r : model.ranks) out.push_back({r.rank, r.host, &r.model});
  return out;
}

std::vector<CollectiveGroup> PairCollectives(const std::vector<RankRef>& ranks) {
  std::map<std::pair<int64_t, std::vector<int>>, size_t> index;
  std::vector<CollectiveGroup> groups;
  for (const RankRef& r : ranks) {
    for (const TraceInstr& in : r.model->instrs) {
      CollectiveName name;
      if (!IsCollective(in) || !ParseCollectiveName(in.op, &name)) continue;
      // A rank records only the collectives it takes part in.
      if (std::find(name.ranks.begin(), name.ranks.end(), r.rank) == name.ranks.end()) continue;
      auto [it, added] = index.emplace(std::make_pair(name.seq, name.ranks), groups.size());
      if (added) {
        CollectiveGroup g;
        g.name = name;
        g.op = in.op;
        groups.push_back(std::move(g));
      }
      CollectiveGroup& g = groups[it->second];
      const bool seen = std::any_of(g.members.begin(), g.members.end(),
                                    [&](const CollectiveMember& m) { return m.rank == r.rank; });
      if (!seen) g.members.push_back({r.rank, &in, 0});
    }
  }
  for (CollectiveGroup& g : groups) {
    std::sort(g.members.begin(), g.members.end(),
              [](const CollectiveMember& a, const CollectiveMember& b) { return a.rank < b.rank; });
    if (!g.complete()) continue;
    for (const CollectiveMember& m : g.members) {
      if (g.last_rank < 0 || m.instr->start > g.last_start) {
        g.last_rank = m.rank;
        g.last_start = m.instr->start;
      }
    }
    // A member can finish before the last one arrives (a broadcast's root): it waited for nobody
    // longer than it ran.
    for (CollectiveMember& m : g.members) {
      m.wait_us = std::clamp(g.last_start - m.instr->start, 0.0, m.instr->duration());
    }
  }
  auto earliest = [](const CollectiveGroup& g) {
    double t = g.members.front().instr->start;
    for (const CollectiveMember& m : g.members) t = std::min(t, m.instr->start);
    return t;
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const auto& a, const auto& b) { return earliest(a) < earliest(b); });
  return groups;
}

std::string MergeRankTraces(const std::vector<RankTraceText>& in) {
  if (in.empty()) throw TraceError("merging rank traces: no trace given");
  std::vector<const RankTraceText*> ranks;
  for (const RankTraceText& r : in) ranks.push_back(&r);
  std::sort(ranks.begin(), ranks.end(),
            [](const RankTraceText* a, const RankTraceText* b) { return a->rank < b->rank; });
  for (size_t k = 1; k < ranks.size(); ++k) {
    if (ranks[k]->rank == ranks[k - 1]->rank) {
      throw TraceError("merging rank traces: rank " + std::to_string(ranks[k]->rank) +
                       " is given twice");
    }
  }
  int64_t origin = ranks.front()->origin_ns;
  for (const RankTraceText* r : ranks) origin = std::min(origin, r->origin_ns);

  json events = json::array();
  json rank_info = json::array();
  std::string version;
  std::set<std::string> hosts;
  std::vector<RankModel> models;
  uint64_t flow_base = 0;
  for (const RankTraceText* r : ranks) {
    const std::string source = "rank " + std::to_string(r->rank) + "'s trace";
    const double shift = static_cast<double>(r->origin_ns - origin) / 1000.0;
    const int64_t pid = int64_t{r->rank} + 1;
    json doc;
    try {
      doc = json::parse(r->json);
    } catch (const json::parse_error& e) {
      throw TraceError(source + ": not valid JSON (" + e.what() + ")");
    }
    const json* rank_events = &doc;
    if (doc.is_object()) {
      auto it = doc.find("traceEvents");
      if (it == doc.end() || !it->is_array()) throw TraceError(source + ": no \"traceEvents\"");
      rank_events = &*it;
      auto other = doc.find("otherData");
      if (version.empty() && other != doc.end() && other->is_object() &&
          other->contains("version") && (*other)["version"].is_string()) {
        version = (*other)["version"].get<std::string>();
      }
    } else if (!doc.is_array()) {
      throw TraceError(source + ": not a Chrome trace");
    }
    const json process_name = {{"ph", "M"},
                               {"name", "process_name"},
                               {"pid", pid},
                               {"args", {{"name", "rank " + std::to_string(r->rank)}}}};
    events.push_back(process_name);
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", pid},
                      {"args", {{"sort_index", r->rank}}}});
    uint64_t max_flow = 0;
    for (json ev : *rank_events) {
      if (!ev.is_object()) continue;
      const std::string ph = ev.value("ph", "");
      if (ph == "M" && ev.value("name", "") == "process_name") continue;  // named above
      ev["pid"] = pid;
      if (ev.contains("ts") && ev["ts"].is_number()) ev["ts"] = Ns(ev["ts"].get<double>() + shift);
      if (auto args = ev.find("args"); ph == "X" && args != ev.end() && args->is_object()) {
        for (const char* key : {"issue", "ready", "start", "end", "complete", "launched"}) {
          auto v = args->find(key);
          if (v != args->end() && v->is_number()) *v = Ns(v->get<double>() + shift);
        }
      }
      if ((ph == "s" || ph == "t" || ph == "f") && ev.contains("id") &&
          ev["id"].is_number_unsigned()) {
        const uint64_t id = ev["id"].get<uint64_t>();
        max_flow = std::max(max_flow, id);
        ev["id"] = flow_base + id;
      }
      events.push_back(std::move(ev));
    }
    flow_base += max_flow;

    RankModel model;
    model.rank = r->rank;
    model.host = r->host;
    model.model = ParseTrace(r->json, source);
    for (TraceInstr& i : model.model.instrs) {
      for (double* t : {&i.issue, &i.ready, &i.start, &i.end, &i.complete}) *t = Ns(*t + shift);
    }
    models.push_back(std::move(model));
    hosts.insert(r->host);
    rank_info.push_back({{"rank", r->rank},
                         {"pid", pid},
                         {"host", r->host},
                         {"origin_ns", r->origin_ns},
                         {"shift_us", shift}});
  }

  // Collective arrows: from the last rank to arrive to each rank that waited for it.
  std::vector<RankRef> refs;
  for (const RankModel& m : models) refs.push_back({m.rank, m.host, &m.model});
  for (const CollectiveGroup& g : PairCollectives(refs)) {
    if (!g.complete() || g.members.size() < 2) continue;
    const CollectiveMember* last = nullptr;
    for (const CollectiveMember& m : g.members) {
      if (m.rank == g.last_rank) last = &m;
    }
    const double from = Inside(*last->instr, last->instr->start + 0.001);
    for (const CollectiveMember& m : g.members) {
      // A rank that was done before the last one arrived (a broadcast's root) waited for nobody.
      if (&m == last || m.instr->end < from) continue;
      const double to = std::min(std::max(from, m.instr->start), m.instr->end);
      const uint64_t id = ++flow_base;
      const json args = {
          {"collective", g.op}, {"last", last->rank}, {"waiter", m.rank}, {"waited_us", m.wait_us}};
      events.push_back({{"ph", "s"},
                        {"id", id},
                        {"name", "collective"},
                        {"cat", "collective"},
                        {"pid", int64_t{last->rank} + 1},
                        {"tid", last->instr->tid},
                        {"ts", from},
                        {"args", args}});
      events.push_back({{"ph", "f"},
                        {"bp", "e"},
                        {"id", id},
                        {"name", "collective"},
                        {"cat", "collective"},
                        {"pid", int64_t{m.rank} + 1},
                        {"tid", m.instr->tid},
                        {"ts", to},
                        {"args", args}});
    }
  }

  json other = {
      {"format", "ofl-trace-1"},      {"version", version},  {"merged", true},
      {"clock", "steady_clock"},      {"origin_ns", origin}, {"clock_aligned", hosts.size() <= 1},
      {"ranks", std::move(rank_info)}};
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData", std::move(other)}};
  return doc.dump();
}

}  // namespace ofl::vm_trace
