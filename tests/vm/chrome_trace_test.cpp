// Tests the Chrome trace writer and the VM's trace sessions: the JSON parses back (nlohmann) with
// one event per instruction, timestamps in microseconds since the trace started and ordered
// issue <= ready <= start <= end, one named track per stream and per issuing thread, flow arrows
// only for dependence edges whose both ends are in the trace, pool events attributed to the blobs
// they served, and memory counters with allocated <= reserved. The recorded sessions run their
// public ops on VmTestDevice() (their raw-blob Functions stay on CPU streams, where blobs need no
// tensor), so the trace of an asynchronous device is checked too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "oneflow_lite/version.h"
#include "tests/vm/trace_json_check.h"
#include "tests/vm/vm_test_util.h"
#include "vm/chrome_trace.h"
#include "vm/instructions_builder.h"
#include "vm/trace.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {
namespace {

using nlohmann::json;
using ofl::testing::ParseAndCheckTrace;
using ofl::testing::ParsedTrace;
using testing::CpuStream;
using testing::MakeCpuBlob;
using testing::ScopeGuard;
using testing::VmTestDevice;

TraceRecord Record(uint64_t id, const std::string& op, const std::string& stream, int64_t issue,
                   int64_t start, int64_t end, std::vector<uint64_t> deps,
                   std::vector<bool> cross) {
  TraceRecord r;
  r.id = id;
  r.policy = "Function";
  r.op = op;
  r.stream = stream;
  r.issue_ns = issue;
  r.ready_ns = issue;
  r.start_ns = start;
  r.end_ns = end;
  r.deps = std::move(deps);
  r.dep_cross_stream = std::move(cross);
  return r;
}

PoolEventRecord Event(int64_t ts, const std::string& device, PoolEventKind kind, uintptr_t address,
                      size_t bytes, uint64_t instruction, int64_t allocated, int64_t reserved) {
  PoolEventRecord e;
  e.ts_ns = ts;
  e.device = device;
  e.kind = kind;
  e.address = address;
  e.bytes = bytes;
  e.instruction = instruction;
  e.allocated_bytes = allocated;
  e.reserved_bytes = reserved;
  return e;
}

const json* FindTrack(const json& doc, const std::string& name) {
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == name) return &e;
  }
  return nullptr;
}

TEST(ChromeTraceJsonTest, HandMadeRecordsBecomeTheDocumentedEvents) {
  // #5 on s/a allocates blob 7; #6 on s/b depends on #5 and on #3 (not in the trace); #8 on s/c (a
  // stream the list lacks) depends on #5 and #6 and failed.
  std::vector<TraceRecord> records;
  records.push_back(Record(5, "producer", "s/a", 1000, 2000, 3000, {3}, {false}));
  records.back().allocs.push_back({7, 100, false});
  records.back().writes = {7};
  records.back().attrs = "sizes=[4, 5, 3]";
  records.push_back(Record(6, "consumer", "s/b", 1500, 3500, 4000, {5, 3}, {true, true}));
  records.back().issue_thread = 1;
  records.back().ready_ns = 3000;
  records.back().reads = {7};
  records.push_back(Record(8, "failing", "s/c", 1600, 4500, 4500, {5, 6}, {true, true}));
  records.back().error = "failing (instruction #8) failed: boom";
  records.back().folded_releases = {7};

  std::vector<PoolEventRecord> events;
  events.push_back(
      Event(1900, "cpu:0", PoolEventKind::kSegmentAlloc, 0x10000, 2 << 20, 5, 0, 2 << 20));
  events.push_back(Event(1950, "cpu:0", PoolEventKind::kAlloc, 0x10000, 512, 5, 512, 2 << 20));
  events.back().requested = 100;
  events.back().owner = "producer";
  events.push_back(Event(4600, "cpu:0", PoolEventKind::kFree, 0x10000, 512, 0, 0, 2 << 20));
  events.back().owner = "producer";
  events.push_back(Event(4700, "cpu:1", PoolEventKind::kAlloc, 0x20000, 512, 0, 512, 2 << 20));
  events.back().requested = 64;
  events.back().cache_hit = true;

  const std::string text = ToChromeTraceJson(records, events, {"s/a", "s/b"}, /*origin_ns=*/500);
  ParsedTrace t;
  ASSERT_NO_FATAL_FAILURE(ParseAndCheckTrace(text, &t));
  EXPECT_EQ(t.doc["otherData"]["version"], std::string(ofl::version()));

  // Tracks: listed streams first, then the extra one; issuing threads; pools per device.
  EXPECT_EQ(t.track_names.at(1), "s/a");
  EXPECT_EQ(t.track_names.at(2), "s/b");
  EXPECT_EQ(t.track_names.at(3), "s/c");
  EXPECT_EQ(t.track_names.at(1000), "issue (thread 0)");
  EXPECT_EQ(t.track_names.at(1001), "issue (thread 1)");
  EXPECT_EQ(t.track_names.at(2000), "pool cpu:0");
  EXPECT_EQ(t.track_names.at(2001), "pool cpu:1");
  EXPECT_EQ(t.track_names.size(), 7u);

  ASSERT_EQ(t.instrs.size(), 3u);
  const json& p = t.instrs.at(5);
  EXPECT_EQ(p["tid"], 1);
  EXPECT_DOUBLE_EQ(p["ts"].get<double>(), 1.5);  // (2000 - 500) ns in us
  EXPECT_DOUBLE_EQ(p["dur"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(p["args"]["issue"].get<double>(), 0.5);
  EXPECT_EQ(p["args"]["allocs"], json::parse(R"([{"blob":7,"bytes":100,"hit":false}])"));
  EXPECT_EQ(p["args"]["writes"], json::parse("[7]"));
  EXPECT_FALSE(p["args"].contains("error"));
  EXPECT_EQ(p["args"]["attrs"], "sizes=[4, 5, 3]");
  const json& c = t.instrs.at(6);
  EXPECT_EQ(c["tid"], 2);
  EXPECT_EQ(c["args"]["deps"], json::parse("[5,3]"));
  EXPECT_EQ(c["args"]["cross_stream"], json::parse("[true,true]"));
  EXPECT_EQ(c["args"]["issue_thread"], 1);
  EXPECT_DOUBLE_EQ(c["args"]["ready"].get<double>(), 2.5);
  EXPECT_FALSE(c["args"].contains("attrs")) << "no attributes, no field";
  const json& f = t.instrs.at(8);
  EXPECT_EQ(f["tid"], 3);
  EXPECT_EQ(f["args"]["error"], "failing (instruction #8) failed: boom");
  EXPECT_EQ(f["args"]["frees"], json::parse("[7]"));

  // Arrows only where both ends are in the trace: none from #3.
  EXPECT_EQ(t.flows, (std::set<std::pair<uint64_t, uint64_t>>{{5, 6}, {5, 8}, {6, 8}}));

  // Issue markers on the issuing threads' tracks.
  ASSERT_EQ(t.issue_markers.size(), 3u);
  for (const json& m : t.issue_markers) {
    const uint64_t id = m["args"]["id"];
    EXPECT_EQ(m["tid"], id == 6 ? 1001 : 1000);
    EXPECT_EQ(m["name"], "issue " + t.instrs.at(id)["name"].get<std::string>());
  }

  // Pool events: the alloc of #5 is blob 7 (its first AllocRecord), the free at the same address
  // too; the cpu:1 alloc has no instruction, so no blob.
  ASSERT_EQ(t.pool_events.size(), 4u);
  EXPECT_EQ(t.pool_events[0]["name"], "segment_alloc");
  EXPECT_EQ(t.pool_events[0]["args"]["blob"], 0);
  EXPECT_EQ(t.pool_events[1]["name"], "alloc");
  EXPECT_EQ(t.pool_events[1]["args"]["blob"], 7);
  EXPECT_EQ(t.pool_events[1]["args"]["owner"], "producer");
  EXPECT_EQ(t.pool_events[1]["args"]["hit"], false);
  EXPECT_EQ(t.pool_events[1]["args"]["requested"], 100);
  EXPECT_EQ(t.pool_events[1]["args"]["instruction"], 5);
  EXPECT_EQ(t.pool_events[2]["name"], "free");
  EXPECT_EQ(t.pool_events[2]["args"]["blob"], 7);
  EXPECT_EQ(t.pool_events[3]["tid"], 2001);
  EXPECT_EQ(t.pool_events[3]["args"]["blob"], 0);
  EXPECT_EQ(t.pool_events[3]["args"]["hit"], true);
  ASSERT_EQ(t.counters.size(), 4u);
  EXPECT_EQ(t.counters[1]["name"], "memory cpu:0");
  EXPECT_EQ(t.counters[1]["args"], json::parse(R"({"allocated":512,"reserved":2097152})"));
  EXPECT_EQ(t.counters[3]["name"], "memory cpu:1");
}

TEST(ChromeTraceJsonTest, EmptyTraceIsAValidDocument) {
  ParsedTrace t;
  ASSERT_NO_FATAL_FAILURE(ParseAndCheckTrace(ToChromeTraceJson({}, {}, {}), &t));
  EXPECT_TRUE(t.instrs.empty());
  EXPECT_TRUE(t.counters.empty());
}

TEST(AttributePoolEventsTest, KthAllocOfAnInstructionIsItsKthAllocRecordAndFreesFollowAddresses) {
  std::vector<TraceRecord> records(1);
  records[0].id = 9;
  records[0].allocs = {{41, 100, false}, {42, 200, true}};
  std::vector<PoolEventRecord> events;
  events.push_back(Event(1, "cpu:0", PoolEventKind::kAlloc, 0xA00, 512, 9, 512, 4096));
  events.back().requested = 100;
  events.push_back(Event(2, "cpu:0", PoolEventKind::kAlloc, 0xC00, 512, 9, 1024, 4096));
  events.back().requested = 200;
  // An alloc whose size disagrees with the record is left unattributed.
  events.push_back(Event(3, "cpu:0", PoolEventKind::kAlloc, 0xE00, 512, 9, 1536, 4096));
  events.back().requested = 300;
  events.push_back(Event(4, "cpu:0", PoolEventKind::kFree, 0xC00, 512, 0, 1024, 4096));
  events.push_back(Event(5, "cpu:0", PoolEventKind::kFree, 0xE00, 512, 0, 512, 4096));
  // Same address on another device: a different block.
  events.push_back(Event(6, "cpu:1", PoolEventKind::kFree, 0xA00, 512, 0, 0, 4096));
  events.push_back(Event(7, "cpu:0", PoolEventKind::kFree, 0xA00, 512, 0, 0, 4096));
  AttributePoolEvents(records, &events);
  std::vector<uint64_t> blobs;
  for (const PoolEventRecord& e : events) blobs.push_back(e.blob);
  EXPECT_EQ(blobs, (std::vector<uint64_t>{41, 42, 0, 42, 0, 0, 41}));
}

TEST(ChromeTraceFileTest, UnwritablePathThrowsInvalidArgumentNamingIt) {
  const std::string path = ::testing::TempDir() + "no_such_dir_for_ofl/trace.json";
  try {
    WriteChromeTrace(path, TraceSession{});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// Records real work: ops on several streams, issued from two threads, with tensors dying.
class TraceSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    was_tracing_ = VirtualMachine::Get().tracing();
    VirtualMachine::Get().Sync();
  }
  void TearDown() override {
    VirtualMachine& vm = VirtualMachine::Get();
    if (vm.tracing()) vm.StopTraceSession();
    if (was_tracing_) vm.StartTraceSession();
  }

 private:
  bool was_tracing_ = false;
};

TEST_F(TraceSessionTest, RecordedWorkBecomesAConsistentChromeTrace) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.StartTraceSession();
  ASSERT_TRUE(vm.tracing());

  BlobPtr shared = MakeCpuBlob(256);
  BlobPtr out = MakeCpuBlob(512);
  InstrRef write, cross_read, same_read;
  PhysicalRun([&](InstructionsBuilder* b) {
    write = b->Function(
        "write_shared", {}, {shared}, [] {}, CpuStream(StreamRole::kCompute));
    cross_read = b->Function(
        "read_on_h2d", {shared}, {out}, [] {}, CpuStream(StreamRole::kHost2Device));
    same_read = b->Function(
        "read_on_compute", {shared}, {}, [] {}, CpuStream(StreamRole::kCompute));
  });
  const Tensor x = tensor<float>({1, 2, 3}, Shape({3, 1}), VmTestDevice());
  uint64_t y_blob = 0;
  {
    const Tensor y = x.expand({3, 4}).contiguous();
    y_blob = y.impl()->blob()->id();
    EXPECT_EQ(y.repeat({1, 2}).to_vector<float>().size(), 24u);
  }
  std::thread other([] {
    const Tensor z = tensor<float>({5, 6}, Shape({2}), VmTestDevice()).repeat({3});
    EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{5, 6, 5, 6, 5, 6}));
  });
  other.join();
  const TraceSession session = vm.StopTraceSession();
  EXPECT_FALSE(vm.tracing());

  ParsedTrace t;
  ASSERT_NO_FATAL_FAILURE(ParseAndCheckTrace(ToChromeTraceJson(session), &t));
  EXPECT_EQ(t.instrs.size(), session.records.size());
  for (const InstrRef& i : {write, cross_read, same_read}) {
    ASSERT_TRUE(t.instrs.count(i->id())) << "#" << i->id() << " " << i->policy()->op_name();
  }
  EXPECT_TRUE(t.flows.count({write->id(), cross_read->id()}));
  EXPECT_TRUE(t.flows.count({write->id(), same_read->id()}));
  const json& cr = t.instrs.at(cross_read->id())["args"];
  EXPECT_EQ(cr["stream"], CpuStream(StreamRole::kHost2Device)->name());
  EXPECT_EQ(cr["deps"], json::array({write->id()}));
  EXPECT_EQ(cr["cross_stream"], json::array({true}));
  EXPECT_EQ(t.instrs.at(same_read->id())["args"]["cross_stream"], json::array({false}));

  // A track per VM stream, named as the VM names it.
  for (Stream* s : vm.devices().streams()) {
    EXPECT_EQ(t.track_names.at(1 + s->index()), s->name());
  }
  // Two issuing threads.
  std::set<int64_t> issue_tracks;
  for (const json& m : t.issue_markers) issue_tracks.insert(m["tid"].get<int64_t>());
  EXPECT_GE(issue_tracks.size(), 2u);

  std::set<std::string> ops;
  for (const auto& [id, e] : t.instrs) ops.insert(e["args"]["op"].get<std::string>());
  for (const char* op : {"from_host", "repeat", "to_vector", "write_shared"}) {
    EXPECT_TRUE(ops.count(op)) << op;
  }

  // The pool saw y's allocation (by the op that produced it: contiguous, or expand when views are
  // disabled) and its free, both attributed to y's blob; counters follow.
  uint64_t y_producer = 0;
  for (const auto& [id, e] : t.instrs) {
    for (const json& a : e["args"]["allocs"]) {
      if (a["blob"] == y_blob) y_producer = id;
    }
  }
  ASSERT_NE(y_producer, 0u) << "no instruction allocated y's blob";
  const std::string y_op = t.instrs.at(y_producer)["args"]["op"];
  EXPECT_TRUE(y_op == "contiguous" || y_op == "expand") << y_op;
  int y_allocs = 0, y_frees = 0;
  for (const json& p : t.pool_events) {
    if (p["args"]["blob"] != y_blob) continue;
    if (p["name"] == "alloc") {
      ++y_allocs;
      EXPECT_EQ(p["args"]["instruction"], y_producer);
    }
    if (p["name"] == "free") ++y_frees;
    EXPECT_EQ(p["args"]["owner"], y_op);
  }
  EXPECT_EQ(y_allocs, 1);
  EXPECT_EQ(y_frees, 1);
  EXPECT_FALSE(t.counters.empty());
  EXPECT_NE(FindTrack(t.doc, "pool " + VmTestDevice().str()), nullptr);
}

TEST_F(TraceSessionTest, StartDropsEarlierRecordsAndStopLeavesLaterWorkOut) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.SetTracing(true);
  InstrRef before, during, after;
  PhysicalRun([&](InstructionsBuilder* b) {
    before = b->Function(
        "before", {}, {}, [] {}, CpuStream(StreamRole::kAux));
  });
  vm.Sync();
  vm.StartTraceSession();
  PhysicalRun([&](InstructionsBuilder* b) {
    during = b->Function(
        "during", {}, {}, [] {}, CpuStream(StreamRole::kAux));
  });
  const TraceSession session = vm.StopTraceSession();
  PhysicalRun([&](InstructionsBuilder* b) {
    after = b->Function(
        "after", {}, {}, [] {}, CpuStream(StreamRole::kAux));
  });
  vm.Sync();
  std::set<uint64_t> ids;
  for (const TraceRecord& r : session.records) ids.insert(r.id);
  EXPECT_FALSE(ids.count(before->id()));
  EXPECT_TRUE(ids.count(during->id()));
  EXPECT_FALSE(ids.count(after->id()));
  EXPECT_TRUE(vm.TakeTrace().empty()) << "recorded while tracing was off";
  for (const TraceRecord& r : session.records) {
    EXPECT_GE(r.issue_ns, session.origin_ns) << "#" << r.id << " issued before the trace began";
  }
}

TEST_F(TraceSessionTest, PoolsAreWatchedOnlyWhileTracing) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.SetTracing(false);
  vm.TakePoolEvents();
  EXPECT_EQ(tensor<float>({1, 2}, Shape({2}), VmTestDevice()).repeat({2}).to_vector<float>().size(),
            4u);
  vm.Sync();
  EXPECT_TRUE(vm.TakePoolEvents().empty()) << "pool events recorded while tracing was off";

  vm.SetTracing(true);
  EXPECT_EQ(tensor<float>({1, 2}, Shape({2}), VmTestDevice()).repeat({2}).to_vector<float>().size(),
            4u);
  vm.Sync();
  vm.SetTracing(false);
  const std::vector<PoolEventRecord> events = vm.TakePoolEvents();
  vm.TakeTrace();
  int allocs = 0, frees = 0;
  for (const PoolEventRecord& e : events) {
    EXPECT_EQ(e.device, VmTestDevice().str());
    EXPECT_LE(e.allocated_bytes, e.reserved_bytes);
    EXPECT_GE(e.ts_ns, 0);
    allocs += e.kind == PoolEventKind::kAlloc;
    frees += e.kind == PoolEventKind::kFree;
  }
  EXPECT_GE(allocs, 2) << "from_host and repeat allocate";
  EXPECT_GE(frees, 2) << "both tensors died";
}

}  // namespace
}  // namespace ofl::vm
