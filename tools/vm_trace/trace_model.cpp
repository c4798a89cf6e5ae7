// Reads Chrome Trace Event JSON into a TraceModel with nlohmann::json. Every malformed field is
// reported with the file, the event's index and the field, so a broken trace is easy to locate.
#include "tools/vm_trace/trace_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

namespace ofl::vm_trace {
namespace {

using nlohmann::json;

class EventReader {
 public:
  EventReader(const std::string& source, size_t index, const json& event)
      : source_(source), index_(index), event_(event) {}

  [[noreturn]] void Fail(const std::string& what) const {
    throw TraceError(source_ + ": event " + std::to_string(index_) + ": " + what);
  }

  // A number field (integer or floating); `fallback` when absent.
  double Number(const json& obj, const char* key, double fallback) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_number()) Fail(std::string("\"") + key + "\" must be a number, got " + it->dump());
    return it->get<double>();
  }
  int64_t Int(const json& obj, const char* key, int64_t fallback) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_number()) Fail(std::string("\"") + key + "\" must be a number, got " + it->dump());
    return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
  }
  std::string String(const json& obj, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return "";
    if (!it->is_string()) Fail(std::string("\"") + key + "\" must be a string, got " + it->dump());
    return it->get<std::string>();
  }
  bool Bool(const json& obj, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return false;
    if (!it->is_boolean()) Fail(std::string("\"") + key + "\" must be true or false");
    return it->get<bool>();
  }
  std::vector<uint64_t> Ids(const json& obj, const char* key) const {
    std::vector<uint64_t> out;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return out;
    if (!it->is_array()) Fail(std::string("\"") + key + "\" must be an array of ids");
    for (const json& v : *it) {
      if (!v.is_number_integer()) Fail(std::string("\"") + key + "\" holds a non-integer id");
      out.push_back(v.get<uint64_t>());
    }
    return out;
  }
  const json& Args() const {
    static const json kEmpty = json::object();
    auto it = event_.find("args");
    if (it == event_.end() || it->is_null()) return kEmpty;
    if (!it->is_object()) Fail("\"args\" must be an object");
    return *it;
  }

 private:
  const std::string& source_;
  size_t index_;
  const json& event_;
};

// "memory cpu:0" -> "cpu:0"; anything not starting with the prefix -> "".
std::string AfterPrefix(const std::string& s, const std::string& prefix) {
  if (s.size() <= prefix.size() || s.compare(0, prefix.size(), prefix) != 0) return "";
  return s.substr(prefix.size());
}

}  // namespace

int64_t TraceModel::IndexOf(uint64_t id) const {
  auto it = std::lower_bound(instrs.begin(), instrs.end(), id,
                             [](const TraceInstr& a, uint64_t v) { return a.id < v; });
  if (it == instrs.end() || it->id != id) return -1;
  return it - instrs.begin();
}

double TraceModel::begin() const {
  double b = std::numeric_limits<double>::infinity();
  for (const TraceInstr& i : instrs) b = std::min(b, std::min(i.issue, i.start));
  for (const auto& [device, samples] : memory) {
    if (!samples.empty()) b = std::min(b, samples.front().ts);
  }
  return instrs.empty() && memory.empty() ? 0 : b;
}

double TraceModel::finish() const {
  double e = -std::numeric_limits<double>::infinity();
  for (const TraceInstr& i : instrs) e = std::max(e, i.end);
  for (const auto& [device, samples] : memory) {
    if (!samples.empty()) e = std::max(e, samples.back().ts);
  }
  return instrs.empty() && memory.empty() ? 0 : e;
}

namespace {

// Builds one process's TraceModel one event at a time, so that a large trace never sits in memory
// as a JSON tree: the parser hands each element of "traceEvents" over as soon as it is complete and
// then drops it.
class ModelBuilder {
 public:
  explicit ModelBuilder(const std::string& source) : source_(source) {}

  // `index`: the event's position in the file (error messages, and the order of unnumbered
  // instructions).
  void AddEvent(const json& ev, size_t index) {
    EventReader r(source_, index, ev);
    const std::string ph = r.String(ev, "ph");
    const std::string name = r.String(ev, "name");
    const int64_t tid = r.Int(ev, "tid", 0);
    if (ph == "M") {
      if (name == "thread_name") thread_names_[tid] = r.String(r.Args(), "name");
    } else if (ph == "X") {
      // An asynchronous device's side of an instruction (launched -> complete) repeats what the
      // instruction's own "complete" field says.
      if (ev.contains("cat") && ev["cat"] == "device") return;
      AddInstruction(r, ev, name, tid, index);
    } else if (ph == "C") {
      const std::string device = AfterPrefix(name, "memory ");
      if (device.empty()) return;  // another producer's counter
      const json& args = r.Args();
      model_.memory[device].push_back(
          {r.Number(ev, "ts", 0), r.Int(args, "allocated", 0), r.Int(args, "reserved", 0)});
    } else if (ph == "i" || ph == "I") {
      if (name != "alloc" && name != "free" && name != "segment_alloc" && name != "segment_free")
        return;  // issue markers and other instants
      PoolEvent p;
      p.kind = name;
      p.ts = r.Number(ev, "ts", 0);
      const json& args = r.Args();
      p.bytes = r.Int(args, "bytes", 0);
      p.hit = r.Bool(args, "hit");
      p.blob = static_cast<uint64_t>(std::max<int64_t>(0, r.Int(args, "blob", 0)));
      p.address = static_cast<uint64_t>(std::max<int64_t>(0, r.Int(args, "address", 0)));
      p.owner = r.String(args, "owner");
      p.allocated = r.Int(args, "allocated", -1);
      p.reserved = r.Int(args, "reserved", -1);
      // The device comes from the track's name ("pool cpu:0"), known once metadata is read.
      pool_by_tid_[tid].push_back(std::move(p));
    }
  }

  // Takes over another process's events, for a trace of several processes that are not ranks
  // (another producer's): they read as one model, as if they were one process.
  void Absorb(ModelBuilder&& other) {
    for (auto& [tid, name] : other.thread_names_) thread_names_[tid] = std::move(name);
    for (auto& [tid, events] : other.pool_by_tid_) {
      auto& dst = pool_by_tid_[tid];
      dst.insert(dst.end(), events.begin(), events.end());
    }
    for (auto& [device, samples] : other.model_.memory) {
      auto& dst = model_.memory[device];
      dst.insert(dst.end(), samples.begin(), samples.end());
    }
    for (TraceInstr& in : other.model_.instrs) model_.instrs.push_back(std::move(in));
    for (auto& entry : other.unnumbered_) unnumbered_.push_back(std::move(entry));
    std::stable_sort(unnumbered_.begin(), unnumbered_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    max_id_ = std::max(max_id_, other.max_id_);
  }

  bool empty() const {
    return model_.instrs.empty() && unnumbered_.empty() && model_.memory.empty() &&
           pool_by_tid_.empty();
  }

  TraceModel Finish();

 private:
  void AddInstruction(const EventReader& r, const json& ev, const std::string& name, int64_t tid,
                      size_t index) {
    const json& args = r.Args();
    TraceInstr in;
    in.tid = tid;
    in.start = r.Number(ev, "ts", std::numeric_limits<double>::quiet_NaN());
    if (std::isnan(in.start)) r.Fail("an \"X\" event needs \"ts\"");
    const double dur = r.Number(ev, "dur", 0);
    if (dur < 0) r.Fail("\"dur\" is negative (" + std::to_string(dur) + ")");
    in.end = in.start + dur;
    in.op = args.contains("op") ? r.String(args, "op") : name;
    in.policy = args.contains("policy") ? r.String(args, "policy") : r.String(ev, "cat");
    in.stream = r.String(args, "stream");
    in.issue = r.Number(args, "issue", in.start);
    in.ready = r.Number(args, "ready", in.issue);
    in.complete = std::max(in.end, r.Number(args, "complete", in.end));
    in.reads = r.Ids(args, "reads");
    in.writes = r.Ids(args, "writes");
    in.deps = r.Ids(args, "deps");
    in.frees = r.Ids(args, "frees");
    in.error = r.String(args, "error");
    in.attrs = r.String(args, "attrs");
    if (auto it = args.find("cross_stream"); it != args.end() && it->is_array()) {
      for (const json& b : *it) in.cross_stream.push_back(b.is_boolean() && b.get<bool>());
    }
    in.cross_stream.resize(in.deps.size(), false);
    if (auto it = args.find("allocs"); it != args.end() && it->is_array()) {
      for (const json& a : *it) {
        if (!a.is_object()) r.Fail("\"allocs\" must hold objects");
        in.allocs.push_back(
            {static_cast<uint64_t>(r.Int(a, "blob", 0)), r.Int(a, "bytes", 0), r.Bool(a, "hit")});
      }
    }
    if (args.contains("id")) {
      const int64_t id = r.Int(args, "id", 0);
      if (id < 0) r.Fail("\"id\" is negative");
      in.id = static_cast<uint64_t>(id);
      max_id_ = std::max(max_id_, in.id);
      model_.instrs.push_back(std::move(in));
    } else {
      unnumbered_.emplace_back(index, std::move(in));
    }
  }

  const std::string& source_;
  TraceModel model_;
  std::map<int64_t, std::string> thread_names_;
  std::map<int64_t, std::vector<PoolEvent>> pool_by_tid_;
  std::vector<std::pair<size_t, TraceInstr>> unnumbered_;  // X events without args.id, by index
  uint64_t max_id_ = 0;
};

TraceModel ModelBuilder::Finish() {
  for (auto& [index, in] : unnumbered_) {
    in.id = ++max_id_;
    model_.instrs.push_back(std::move(in));
  }
  for (auto& [tid, events_of_tid] : pool_by_tid_) {
    std::string device = AfterPrefix(thread_names_[tid], "pool ");
    if (device.empty()) device = "track " + std::to_string(tid);
    auto& dst = model_.pool[device];
    dst.insert(dst.end(), events_of_tid.begin(), events_of_tid.end());
  }
  for (auto& [device, events_of_device] : model_.pool) {
    std::stable_sort(events_of_device.begin(), events_of_device.end(),
                     [](const PoolEvent& a, const PoolEvent& b) { return a.ts < b.ts; });
  }
  for (auto& [device, samples] : model_.memory) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const MemorySample& a, const MemorySample& b) { return a.ts < b.ts; });
  }

  std::sort(model_.instrs.begin(), model_.instrs.end(),
            [](const TraceInstr& a, const TraceInstr& b) { return a.id < b.id; });
  for (size_t i = 1; i < model_.instrs.size(); ++i) {
    if (model_.instrs[i].id == model_.instrs[i - 1].id) {
      throw TraceError(source_ + ": instruction id " + std::to_string(model_.instrs[i].id) +
                       " appears in more than one \"X\" event");
    }
  }

  // Lanes: every track holding an instruction, named by its metadata (or by the stream arg).
  std::map<int64_t, std::string> lanes;
  for (TraceInstr& in : model_.instrs) {
    auto named = thread_names_.find(in.tid);
    const bool has_name = named != thread_names_.end() && !named->second.empty();
    if (in.stream.empty()) in.stream = has_name ? named->second : "track " + std::to_string(in.tid);
    if (!lanes.count(in.tid)) lanes[in.tid] = has_name ? named->second : in.stream;
  }
  // Stream tracks that stayed empty still get a lane (tids below 1000 are VM streams).
  for (const auto& [tid, name] : thread_names_) {
    if (tid > 0 && tid < 1000 && !lanes.count(tid)) lanes[tid] = name;
  }
  for (const auto& [tid, name] : lanes) model_.lanes.push_back({tid, name});
  return std::move(model_);
}

// Routes each event to its process's ModelBuilder (by "pid"). Processes named "rank N" make a
// merged trace: one model per rank. Otherwise every process reads into one model, as before.
class TraceBuilder {
 public:
  explicit TraceBuilder(const std::string& source) : source_(source) {}

  void AddEvent(const json& ev) {
    const size_t index = next_index_++;
    EventReader r(source_, index, ev);
    if (!ev.is_object()) r.Fail("an event must be an object, got " + std::string(ev.type_name()));
    // Another producer's pid may be a string: those events read as one process, as before.
    const auto pid_field = ev.find("pid");
    const int64_t pid = pid_field != ev.end() && pid_field->is_number() ? r.Int(ev, "pid", 0) : 0;
    if (r.String(ev, "ph") == "M" && r.String(ev, "name") == "process_name") {
      process_names_[pid] = r.String(r.Args(), "name");
    }
    by_pid_.try_emplace(pid, source_).first->second.AddEvent(ev, index);
  }

  void SetOtherData(const json& other) {
    if (!other.is_object()) return;
    if (other.contains("format") && other["format"].is_string())
      format_ = other["format"].get<std::string>();
    if (other.contains("version") && other["version"].is_string())
      version_ = other["version"].get<std::string>();
    if (auto it = other.find("ranks"); it != other.end() && it->is_array()) {
      for (const json& r : *it) {
        if (r.is_object() && r.contains("rank") && r["rank"].is_number_integer() &&
            r.contains("host") && r["host"].is_string()) {
          hosts_[r["rank"].get<int>()] = r["host"].get<std::string>();
        }
      }
    }
  }

  TraceModel Finish();

 private:
  const std::string& source_;
  size_t next_index_ = 0;
  std::map<int64_t, ModelBuilder> by_pid_;
  std::map<int64_t, std::string> process_names_;
  std::map<int, std::string> hosts_;
  std::string format_, version_;
};

// "rank 3" -> 3; anything else -> -1.
int RankOfProcessName(const std::string& name) {
  const std::string digits = AfterPrefix(name, "rank ");
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::stoi(digits);
}

TraceModel TraceBuilder::Finish() {
  TraceModel model;
  std::map<int, int64_t> rank_pid;
  for (const auto& [pid, name] : process_names_) {
    const int rank = RankOfProcessName(name);
    if (rank < 0) continue;
    if (!rank_pid.emplace(rank, pid).second) {
      throw TraceError(source_ + ": two processes are named \"rank " + std::to_string(rank) +
                       "\" (pids " + std::to_string(rank_pid[rank]) + " and " +
                       std::to_string(pid) + ")");
    }
  }
  if (rank_pid.empty()) {
    if (!by_pid_.empty()) {
      auto first = by_pid_.begin();
      for (auto it = std::next(first); it != by_pid_.end(); ++it) {
        first->second.Absorb(std::move(it->second));
      }
      model = first->second.Finish();
    }
  } else {
    for (const auto& [pid, builder] : by_pid_) {
      const auto named = process_names_.find(pid);
      if (named != process_names_.end() && RankOfProcessName(named->second) >= 0) continue;
      if (!builder.empty()) {
        throw TraceError(source_ +
                         ": a merged trace (processes named \"rank N\") holds events of " +
                         "process " + std::to_string(pid) + ", which is not a rank");
      }
    }
    for (const auto& [rank, pid] : rank_pid) {
      RankModel r;
      r.rank = rank;
      if (auto host = hosts_.find(rank); host != hosts_.end()) r.host = host->second;
      if (auto it = by_pid_.find(pid); it != by_pid_.end()) r.model = it->second.Finish();
      r.model.format = format_;
      r.model.version = version_;
      model.ranks.push_back(std::move(r));
    }
  }
  model.format = format_;
  model.version = version_;
  return model;
}

// Parses `input` (a string or a stream) event by event into a model.
template <class Input>
TraceModel Parse(Input&& input, const std::string& source) {
  TraceBuilder builder(source);
  enum class Top { kUnknown, kArray, kObject, kOther } top = Top::kUnknown;
  std::string key;  // the top-level object's key being parsed
  bool saw_events = false;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    using E = json::parse_event_t;
    if (depth == 0) {
      if (event == E::object_start) top = Top::kObject;
      if (event == E::array_start) top = Top::kArray;
      if (event == E::value && top == Top::kUnknown) top = Top::kOther;
      return true;
    }
    if (top == Top::kObject && depth == 1) {
      if (event == E::key) key = parsed.get<std::string>();
      if (key == "traceEvents" && event == E::array_start) saw_events = true;
      if (key == "traceEvents" && event == E::value && !parsed.is_array()) {
        throw TraceError(source + ": not a Chrome trace (\"traceEvents\" is not an array)");
      }
      if (key == "otherData" && (event == E::object_end || event == E::value)) {
        builder.SetOtherData(parsed);
        return false;
      }
      // Whatever else the top level holds is not needed; keep only what is small.
      return key != "traceEvents" || event != E::array_end;
    }
    // An element of the event array: hand it over, then drop it.
    const bool in_events = (top == Top::kArray && depth == 1) ||
                           (top == Top::kObject && depth == 2 && key == "traceEvents");
    if (in_events && (event == E::object_end || event == E::array_end || event == E::value)) {
      builder.AddEvent(parsed);
      return false;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(std::forward<Input>(input), callback);
  } catch (const json::parse_error& e) {
    throw TraceError(source + ": not valid JSON (" + e.what() + ")");
  }
  if (top == Top::kOther || (!doc.is_object() && !doc.is_array() && !doc.is_discarded())) {
    throw TraceError(source + ": not a Chrome trace (expected a JSON object or array, got " +
                     std::string(doc.type_name()) + ")");
  }
  if (top == Top::kObject && !saw_events) {
    throw TraceError(source +
                     ": not a Chrome trace (the top-level object has no \"traceEvents\" array)");
  }
  return builder.Finish();
}

}  // namespace

TraceModel ParseTrace(const std::string& text, const std::string& source) {
  return Parse(text, source);
}

TraceModel LoadTrace(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw TraceError(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path + ": cannot open the file for reading");
  if (in.peek() == std::ifstream::traits_type::eof()) {
    throw TraceError(path + ": the file is empty (not a trace)");
  }
  return Parse(in, path);
}

}  // namespace ofl::vm_trace
