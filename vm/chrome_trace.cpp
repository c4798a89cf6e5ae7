// The Chrome trace writer: turns TraceRecords and pool events into "ofl-trace-1" JSON.
#include "vm/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "oneflow_lite/error.h"
#include "oneflow_lite/version.h"

namespace ofl::vm {

namespace {

using nlohmann::json;

constexpr int kPid = 1;
constexpr int kIssueTidBase = 1000;
constexpr int kDeviceTidBase = 500;  // + a stream's tid: that stream's device side
constexpr int kPoolTidBase = 2000;

json Metadata(const char* name, int tid, const json& args) {
  json e = {{"ph", "M"}, {"name", name}, {"pid", kPid}, {"args", args}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

void AddTrackName(json* events, int tid, const std::string& name) {
  events->push_back(Metadata("thread_name", tid, {{"name", name}}));
  // Keeps streams first, then the issuing threads, then the pools, whatever the viewer's default.
  events->push_back(Metadata("thread_sort_index", tid, {{"sort_index", tid}}));
}

int64_t EarliestTimestamp(const std::vector<TraceRecord>& records,
                          const std::vector<PoolEventRecord>& pool_events) {
  int64_t t0 = std::numeric_limits<int64_t>::max();
  for (const TraceRecord& r : records) t0 = std::min(t0, r.issue_ns);
  for (const PoolEventRecord& e : pool_events) t0 = std::min(t0, e.ts_ns);
  return t0 == std::numeric_limits<int64_t>::max() ? 0 : t0;
}

}  // namespace

std::string ToChromeTraceJson(const std::vector<TraceRecord>& records,
                              const std::vector<PoolEventRecord>& pool_events,
                              const std::vector<std::string>& stream_names, int64_t origin_ns) {
  const int64_t origin = origin_ns != 0 ? origin_ns : EarliestTimestamp(records, pool_events);
  auto us = [origin](int64_t ns) { return static_cast<double>(ns - origin) / 1000.0; };

  json events = json::array();
  events.push_back(Metadata("process_name", -1, {{"name", "oneflow_lite"}}));

  // Stream tracks: tid 1 + index, in the VM's order, then streams only the records name.
  std::map<std::string, int> stream_tid;
  std::vector<std::string> streams = stream_names;
  for (const TraceRecord& r : records) {
    if (std::find(streams.begin(), streams.end(), r.stream) == streams.end()) {
      streams.push_back(r.stream);
    }
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    const int tid = 1 + static_cast<int>(i);
    if (stream_tid.emplace(streams[i], tid).second) AddTrackName(&events, tid, streams[i]);
  }

  // Asynchronous streams' device side: tid kDeviceTidBase + the stream's tid.
  for (const TraceRecord& r : records) {
    if (r.async && stream_tid.count(r.stream) != 0) {
      const int tid = kDeviceTidBase + stream_tid.at(r.stream);
      if (stream_tid.emplace(r.stream + " (device)", tid).second) {
        AddTrackName(&events, tid, r.stream + " (device: launched -> complete)");
      }
    }
  }

  // Issuing threads: tid 1000 + k.
  std::map<int, bool> issue_threads;
  for (const TraceRecord& r : records) issue_threads[r.issue_thread] = true;
  for (const auto& [k, unused] : issue_threads) {
    AddTrackName(&events, kIssueTidBase + k, "issue (thread " + std::to_string(k) + ")");
  }

  std::unordered_map<uint64_t, const TraceRecord*> by_id;
  by_id.reserve(records.size());
  for (const TraceRecord& r : records) by_id.emplace(r.id, &r);

  uint64_t next_flow = 1;
  for (const TraceRecord& r : records) {
    const int tid = stream_tid.at(r.stream);
    json allocs = json::array();
    for (const AllocRecord& a : r.allocs) {
      allocs.push_back({{"blob", a.blob_id}, {"bytes", a.bytes}, {"hit", a.cache_hit}});
    }
    json args = {{"id", r.id},
                 {"policy", r.policy},
                 {"op", r.op},
                 {"stream", r.stream},
                 {"issue_thread", r.issue_thread},
                 {"reads", r.reads},
                 {"writes", r.writes},
                 {"deps", r.deps},
                 {"cross_stream", r.dep_cross_stream},
                 {"issue", us(r.issue_ns)},
                 {"ready", us(r.ready_ns)},
                 {"start", us(r.start_ns)},
                 {"end", us(r.end_ns)},
                 {"complete", us(r.complete_ns)},
                 {"allocs", std::move(allocs)},
                 {"frees", r.folded_releases}};
    if (!r.attrs.empty()) args["attrs"] = r.attrs;
    if (!r.error.empty()) args["error"] = r.error;
    events.push_back({{"ph", "X"},
                      {"name", r.op},
                      {"cat", r.policy},
                      {"pid", kPid},
                      {"tid", tid},
                      {"ts", us(r.start_ns)},
                      {"dur", static_cast<double>(r.end_ns - r.start_ns) / 1000.0},
                      {"args", std::move(args)}});
    if (r.async) {
      // The device's side: from the launch until the completion event was seen.
      events.push_back(
          {{"ph", "X"},
           {"name", r.op},
           {"cat", "device"},
           {"pid", kPid},
           {"tid", kDeviceTidBase + tid},
           {"ts", us(r.end_ns)},
           {"dur", static_cast<double>(r.complete_ns - r.end_ns) / 1000.0},
           {"args", {{"id", r.id}, {"launched", us(r.end_ns)}, {"complete", us(r.complete_ns)}}}});
    }
    events.push_back({{"ph", "i"},
                      {"s", "t"},
                      {"name", "issue " + r.op},
                      {"pid", kPid},
                      {"tid", kIssueTidBase + r.issue_thread},
                      {"ts", us(r.issue_ns)},
                      {"args", {{"id", r.id}}}});
    // A flow arrow per edge whose both ends are in the trace. The start sits a nanosecond inside
    // the predecessor's slice so that viewers bind it to that slice, not to whatever follows.
    std::unordered_set<uint64_t> seen;
    for (uint64_t dep : r.deps) {
      auto it = by_id.find(dep);
      if (it == by_id.end() || !seen.insert(dep).second) continue;
      const TraceRecord& pred = *it->second;
      const int64_t from_ns = std::max(pred.start_ns, pred.end_ns - 1);
      const uint64_t flow = next_flow++;
      json edge = {{"from", pred.id}, {"to", r.id}};
      events.push_back({{"ph", "s"},
                        {"id", flow},
                        {"name", "dep"},
                        {"cat", "dep"},
                        {"pid", kPid},
                        {"tid", stream_tid.at(pred.stream)},
                        {"ts", us(from_ns)},
                        {"args", edge}});
      events.push_back({{"ph", "f"},
                        {"bp", "e"},
                        {"id", flow},
                        {"name", "dep"},
                        {"cat", "dep"},
                        {"pid", kPid},
                        {"tid", tid},
                        {"ts", us(r.start_ns)},
                        {"args", edge}});
    }
  }

  // Memory: a counter track and a pool-event track per device, in order of first appearance.
  std::vector<PoolEventRecord> pool = pool_events;
  AttributePoolEvents(records, &pool);
  std::map<std::string, int> device_slot;
  for (const PoolEventRecord& e : pool) {
    auto [it, added] = device_slot.emplace(e.device, static_cast<int>(device_slot.size()));
    if (added) AddTrackName(&events, kPoolTidBase + it->second, "pool " + e.device);
    json args = {{"bytes", e.bytes},
                 {"blob", e.blob},
                 {"owner", e.owner},
                 {"address", e.address},
                 {"instruction", e.instruction},
                 {"allocated", e.allocated_bytes},
                 {"reserved", e.reserved_bytes}};
    if (e.kind == PoolEventKind::kAlloc) {
      args["hit"] = e.cache_hit;
      args["requested"] = e.requested;
    }
    events.push_back({{"ph", "i"},
                      {"s", "t"},
                      {"name", to_string(e.kind)},
                      {"pid", kPid},
                      {"tid", kPoolTidBase + it->second},
                      {"ts", us(e.ts_ns)},
                      {"args", std::move(args)}});
    events.push_back(
        {{"ph", "C"},
         {"name", "memory " + e.device},
         {"pid", kPid},
         {"ts", us(e.ts_ns)},
         {"args", {{"allocated", e.allocated_bytes}, {"reserved", e.reserved_bytes}}}});
  }

  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData", {{"format", "ofl-trace-1"}, {"version", ofl::version()}}}};
  return doc.dump();
}

std::string ToChromeTraceJson(const TraceSession& session) {
  return ToChromeTraceJson(session.records, session.pool_events, session.stream_names,
                           session.origin_ns);
}

void WriteChromeTrace(const std::string& path, const TraceSession& session) {
  const std::string text = ToChromeTraceJson(session);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw InvalidArgument("trace: cannot open '" + path + "' for writing: " + std::strerror(errno));
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    throw InvalidArgument("trace: writing '" + path + "' failed: " + std::strerror(errno));
  }
}

std::string PerRankTracePath(const std::string& path, int rank, int world) {
  if (world <= 1) return path;
  const size_t slash = path.find_last_of('/');
  const size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  size_t dot = path.find_last_of('.');
  // No extension: a dot in a folder name, or a name that only starts with a dot (".trace").
  if (dot == std::string::npos || dot <= name_at) dot = path.size();
  return path.substr(0, dot) + ".rank" + std::to_string(rank) + path.substr(dot);
}

}  // namespace ofl::vm
