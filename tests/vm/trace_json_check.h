// Reads an "ofl-trace-1" Chrome trace back with nlohmann::json and checks the invariants every
// trace must keep (vm/TRACE_FORMAT.md): one event per instruction, ordered timestamps, dependence
// edges and flow arrows pointing from earlier to later instructions, one named track per stream,
// memory counters with allocated <= reserved. An instruction of an asynchronous stream also has one
// device-side slice (launched -> complete, vm/chrome_trace.cpp) on its stream's device track, and
// work on another device starts only after the device side completed. Shared by the VM and the
// public-API tests, which run on "sim" devices too.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ofl::testing {

struct ParsedTrace {
  nlohmann::json doc;
  std::map<uint64_t, nlohmann::json> instrs;       // id -> its "X" event
  std::map<uint64_t, nlohmann::json> device_side;  // id -> its device-side "X" event (async only)
  std::map<int64_t, std::string> track_names;      // tid -> thread_name
  std::set<std::pair<uint64_t, uint64_t>> flows;   // (from id, to id)
  std::vector<nlohmann::json> counters;            // "C" events
  std::vector<nlohmann::json> pool_events;         // instants on pool tracks
  std::vector<nlohmann::json> issue_markers;       // instants on issuing-thread tracks

  // Ids of the instructions whose op is `op`.
  std::vector<uint64_t> IdsOf(const std::string& op) const {
    std::vector<uint64_t> ids;
    for (const auto& [id, e] : instrs) {
      if (e["args"]["op"] == op) ids.push_back(id);
    }
    return ids;
  }
};

// Parses `text` into *out and checks it (failures are reported through gtest). Stops at the first
// failure of a structural check so that later lookups stay safe: callers wrap it in
// ASSERT_NO_FATAL_FAILURE.
inline void ParseAndCheckTrace(const std::string& text, ParsedTrace* out) {
  ParsedTrace& t = *out;
  t.doc = nlohmann::json::parse(text);  // throws (and so fails the test) when not JSON
  const nlohmann::json& doc = t.doc;
  EXPECT_EQ(doc.value("displayTimeUnit", ""), "ns");
  EXPECT_EQ(doc["otherData"].value("format", ""), "ofl-trace-1");
  EXPECT_TRUE(doc["otherData"].contains("version"));
  const nlohmann::json& events = doc.at("traceEvents");
  EXPECT_TRUE(events.is_array());

  int process_names = 0;
  std::map<uint64_t, std::pair<nlohmann::json, nlohmann::json>> flow_ends;  // flow id -> (s, f)
  for (const nlohmann::json& e : events) {
    const std::string ph = e.at("ph");
    EXPECT_EQ(e.at("pid"), 1) << e.dump();
    if (ph == "M") {
      if (e["name"] == "process_name") {
        ++process_names;
      } else if (e["name"] == "thread_name") {
        const int64_t tid = e.at("tid");
        EXPECT_TRUE(t.track_names.emplace(tid, e["args"]["name"].get<std::string>()).second)
            << "two thread_name events for tid " << tid;
      }
    } else if (ph == "X" && e.value("cat", "") == "device") {
      const uint64_t id = e["args"].at("id");
      EXPECT_TRUE(t.device_side.emplace(id, e).second)
          << "instruction #" << id << " has two device-side slices";
    } else if (ph == "X") {
      const uint64_t id = e["args"].at("id");
      EXPECT_TRUE(t.instrs.emplace(id, e).second) << "instruction #" << id << " appears twice";
    } else if (ph == "s" || ph == "f") {
      auto& ends = flow_ends[e.at("id").get<uint64_t>()];
      (ph == "s" ? ends.first : ends.second) = e;
    } else if (ph == "C") {
      t.counters.push_back(e);
    } else if (ph == "i") {
      const int64_t tid = e.at("tid");
      if (tid >= 2000) {
        t.pool_events.push_back(e);
      } else if (tid >= 1000) {
        t.issue_markers.push_back(e);
      } else {
        ADD_FAILURE() << "instant on a stream track: " << e.dump();
      }
    } else {
      ADD_FAILURE() << "unexpected event phase " << ph;
    }
  }
  EXPECT_EQ(process_names, 1);

  std::map<std::string, int> stream_tracks;
  for (const auto& [tid, name] : t.track_names) {
    if (tid < 1000) ++stream_tracks[name];
  }
  for (const auto& [name, n] : stream_tracks) {
    EXPECT_EQ(n, 1) << "stream " << name << " has " << n << " tracks";
  }

  std::set<uint64_t> issue_ids;
  for (const nlohmann::json& m : t.issue_markers) {
    EXPECT_TRUE(t.track_names.count(m["tid"].get<int64_t>())) << "issue marker on an unnamed track";
    issue_ids.insert(m["args"]["id"].get<uint64_t>());
  }

  for (const auto& [id, e] : t.instrs) {
    SCOPED_TRACE("instruction #" + std::to_string(id) + " " + e["args"]["op"].get<std::string>());
    const nlohmann::json& a = e["args"];
    const double issue = a.at("issue"), ready = a.at("ready"), start = a.at("start"),
                 end = a.at("end");
    EXPECT_LE(issue, ready);
    EXPECT_LE(ready, start);
    EXPECT_LE(start, end);
    EXPECT_GE(issue, 0.0);
    EXPECT_EQ(e["ts"].get<double>(), start);
    EXPECT_NEAR(e["dur"].get<double>(), end - start, 1e-6);
    EXPECT_EQ(e["name"], a["op"]);
    EXPECT_EQ(e["cat"], a["policy"]);
    const int64_t tid = e["tid"];
    ASSERT_TRUE(t.track_names.count(tid)) << "X event on an unnamed track";
    EXPECT_LT(tid, 1000);
    EXPECT_EQ(t.track_names.at(tid), a["stream"].get<std::string>());
    EXPECT_EQ(a["deps"].size(), a["cross_stream"].size());
    EXPECT_TRUE(issue_ids.count(id)) << "no issue marker";
    for (size_t i = 0; i < a["deps"].size(); ++i) {
      const uint64_t dep = a["deps"][i];
      EXPECT_LT(dep, id) << "a dependence edge points to a later instruction";
      auto pred = t.instrs.find(dep);
      if (pred == t.instrs.end()) continue;
      EXPECT_EQ(a["cross_stream"][i].get<bool>(), pred->second["args"]["stream"] != a["stream"]);
      EXPECT_LE(pred->second["args"]["end"].get<double>(), start)
          << "started before its predecessor #" << dep << " ended";
    }
  }

  // The device side of an asynchronous instruction: from its launch (the end of its stream slice)
  // to its completion, on the track 500 + its stream's tid.
  constexpr int64_t kDeviceTidBase = 500;
  for (const auto& [id, d] : t.device_side) {
    SCOPED_TRACE("device side of instruction #" + std::to_string(id));
    auto it = t.instrs.find(id);
    ASSERT_NE(it, t.instrs.end()) << "a device-side slice without its instruction";
    const nlohmann::json& e = it->second;
    const nlohmann::json& a = d["args"];
    EXPECT_EQ(d["name"], e["name"]);
    const int64_t tid = d["tid"];
    EXPECT_EQ(tid, kDeviceTidBase + e["tid"].get<int64_t>());
    ASSERT_TRUE(t.track_names.count(tid)) << "device-side slice on an unnamed track";
    EXPECT_EQ(t.track_names.at(tid),
              e["args"]["stream"].get<std::string>() + " (device: launched -> complete)");
    const double launched = a.at("launched"), complete = a.at("complete");
    EXPECT_EQ(launched, e["args"]["end"].get<double>());
    EXPECT_EQ(complete, e["args"]["complete"].get<double>());
    EXPECT_LE(launched, complete);
    EXPECT_EQ(d["ts"].get<double>(), launched);
    EXPECT_NEAR(d["dur"].get<double>(), complete - launched, 1e-6);
  }
  // What another device (the host included) sees of an asynchronous instruction waits for its
  // completion; on the same device a stream only waits on the device, so launch order suffices.
  auto device_of = [](const nlohmann::json& e) {
    const std::string stream = e["args"]["stream"];
    return stream.substr(0, stream.find('/'));
  };
  for (const auto& [id, e] : t.instrs) {
    for (const auto& dep : e["args"]["deps"]) {
      auto pred = t.device_side.find(dep.get<uint64_t>());
      if (pred == t.device_side.end()) continue;
      if (device_of(t.instrs.at(dep.get<uint64_t>())) == device_of(e)) continue;
      EXPECT_LE(pred->second["args"]["complete"].get<double>(), e["args"]["start"].get<double>())
          << "#" << id << " on " << e["args"]["stream"] << " started before its predecessor #"
          << dep << " on another device completed";
    }
  }

  for (const auto& [flow, ends] : flow_ends) {
    const nlohmann::json& s = ends.first;
    const nlohmann::json& f = ends.second;
    ASSERT_FALSE(s.is_null()) << "flow " << flow << " has no start";
    ASSERT_FALSE(f.is_null()) << "flow " << flow << " has no end";
    const uint64_t from = s["args"]["from"], to = s["args"]["to"];
    EXPECT_EQ(f["args"]["from"], from);
    EXPECT_EQ(f["args"]["to"], to);
    EXPECT_LT(from, to) << "flow arrow from a later to an earlier instruction";
    ASSERT_TRUE(t.instrs.count(from) && t.instrs.count(to))
        << "flow " << from << " -> " << to << " leaves the trace";
    const nlohmann::json& pred = t.instrs.at(from);
    const nlohmann::json& succ = t.instrs.at(to);
    EXPECT_EQ(s["tid"], pred["tid"]);
    EXPECT_EQ(f["tid"], succ["tid"]);
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(f["ts"].get<double>(), succ["ts"].get<double>());
    EXPECT_GE(s["ts"].get<double>(), pred["ts"].get<double>());
    EXPECT_LE(s["ts"].get<double>(), pred["args"]["end"].get<double>());
    const auto& deps = succ["args"]["deps"];
    EXPECT_NE(std::find(deps.begin(), deps.end(), from), deps.end());
    EXPECT_TRUE(t.flows.emplace(from, to).second) << "two arrows " << from << " -> " << to;
  }
  // Every edge with both ends in the trace has its arrow.
  for (const auto& [id, e] : t.instrs) {
    for (const auto& dep : e["args"]["deps"]) {
      if (t.instrs.count(dep.get<uint64_t>())) {
        EXPECT_TRUE(t.flows.count({dep.get<uint64_t>(), id}))
            << "no arrow for #" << dep << " -> #" << id;
      }
    }
  }

  for (const nlohmann::json& c : t.counters) {
    const std::string name = c.at("name");
    EXPECT_EQ(name.rfind("memory ", 0), 0u) << name;
    const int64_t allocated = c["args"].at("allocated"), reserved = c["args"].at("reserved");
    EXPECT_GE(allocated, 0);
    EXPECT_LE(allocated, reserved) << c.dump();
  }
  for (const nlohmann::json& p : t.pool_events) {
    const int64_t tid = p["tid"];
    ASSERT_TRUE(t.track_names.count(tid)) << "pool event on an unnamed track";
    EXPECT_EQ(t.track_names.at(tid).rfind("pool ", 0), 0u);
    const std::string kind = p.at("name");
    EXPECT_TRUE(kind == "alloc" || kind == "free" || kind == "segment_alloc" ||
                kind == "segment_free")
        << kind;
    EXPECT_EQ(p["args"].contains("hit"), kind == "alloc");
    EXPECT_LE(p["args"]["allocated"].get<int64_t>(), p["args"]["reserved"].get<int64_t>());
  }
  EXPECT_EQ(t.counters.size(), t.pool_events.size()) << "a counter sample per pool event";
}

}  // namespace ofl::testing
