// Tests that traces are read back faithfully (every field of an ofl-trace-1 instruction, lanes
// named by their metadata, pool events by device), that any Chrome trace with "X" events can be
// read, and that a broken or missing file is refused with a message naming the file and the fault.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/tools/trace_test_util.h"
#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {
namespace {

// Expects ParseTrace(text, "t.json") to throw TraceError whose message holds every `parts`.
void ExpectRefused(const std::string& text, const std::vector<std::string>& parts) {
  try {
    ParseTrace(text, "t.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.json"), std::string::npos) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
}

TEST(TraceModelTest, ReadsEveryFieldOfAnInstruction) {
  const TraceModel m = ParseTrace(testing::kHandMadeTrace);
  EXPECT_EQ(m.format, "ofl-trace-1");
  EXPECT_EQ(m.version, "0.1.0");
  ASSERT_EQ(m.instrs.size(), 4u);
  const TraceInstr& join = m.instrs[3];
  EXPECT_EQ(join.id, 4u);
  EXPECT_EQ(join.op, "join");
  EXPECT_EQ(join.policy, "Function");
  EXPECT_EQ(join.stream, "cpu:0/compute");
  EXPECT_EQ(join.tid, 1);
  EXPECT_EQ(join.reads, (std::vector<uint64_t>{8, 9}));
  EXPECT_EQ(join.deps, (std::vector<uint64_t>{2, 3, 99}));
  EXPECT_EQ(join.cross_stream, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(join.frees, (std::vector<uint64_t>{7}));
  EXPECT_DOUBLE_EQ(join.issue, 3);
  EXPECT_DOUBLE_EQ(join.ready, 40);
  EXPECT_DOUBLE_EQ(join.start, 40);
  EXPECT_DOUBLE_EQ(join.end, 50);
  EXPECT_NE(join.error.find("boom"), std::string::npos);
  const TraceInstr& from_host = m.instrs[0];
  ASSERT_EQ(from_host.allocs.size(), 1u);
  EXPECT_EQ(from_host.allocs[0].blob, 7u);
  EXPECT_EQ(from_host.allocs[0].bytes, 100);
  EXPECT_FALSE(from_host.allocs[0].hit);
  EXPECT_EQ(from_host.attrs, "");
  EXPECT_EQ(m.instrs[1].attrs, "sizes=[4, 5]");
  EXPECT_EQ(m.IndexOf(3), 2);
  EXPECT_EQ(m.IndexOf(99), -1);
}

TEST(TraceModelTest, LanesAreTheStreamTracksNotTheIssueOrPoolTracks) {
  const TraceModel m = ParseTrace(testing::kHandMadeTrace);
  ASSERT_EQ(m.lanes.size(), 2u);
  EXPECT_EQ(m.lanes[0].tid, 1);
  EXPECT_EQ(m.lanes[0].name, "cpu:0/compute");
  EXPECT_EQ(m.lanes[1].name, "cpu:0/h2d");
}

TEST(TraceModelTest, PoolEventsAndCountersAreKeyedByDevice) {
  const TraceModel m = ParseTrace(testing::kHandMadeTrace);
  ASSERT_EQ(m.pool.count("cpu:0"), 1u);
  const auto& events = m.pool.at("cpu:0");
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind, "alloc");
  EXPECT_EQ(events[0].owner, "from_host");
  EXPECT_EQ(events[3].kind, "free");
  EXPECT_EQ(events[3].allocated, 128);
  ASSERT_EQ(m.memory.count("cpu:0"), 1u);
  ASSERT_EQ(m.memory.at("cpu:0").size(), 3u);
  EXPECT_EQ(m.memory.at("cpu:0")[1].allocated, 256);
  EXPECT_DOUBLE_EQ(m.begin(), 0);
  EXPECT_DOUBLE_EQ(m.finish(), 50);
}

TEST(TraceModelTest, ReadsAPlainChromeTraceWithoutOflArgs) {
  // A bare event array from another producer: ids follow file order, lanes come from the
  // thread names, and an unnamed track is still a lane.
  const TraceModel m = ParseTrace(R"([
    {"ph": "M", "name": "thread_name", "pid": 9, "tid": 3, "args": {"name": "worker"}},
    {"ph": "X", "name": "load", "cat": "io", "pid": 9, "tid": 3, "ts": 5.5, "dur": 2},
    {"ph": "X", "name": "step", "pid": 9, "tid": 4, "ts": 8, "dur": 1},
    {"ph": "B", "name": "ignored", "pid": 9, "tid": 3, "ts": 1}])");
  EXPECT_EQ(m.format, "");
  ASSERT_EQ(m.instrs.size(), 2u);
  EXPECT_EQ(m.instrs[0].id, 1u);
  EXPECT_EQ(m.instrs[0].op, "load");
  EXPECT_EQ(m.instrs[0].policy, "io");
  EXPECT_EQ(m.instrs[0].stream, "worker");
  EXPECT_DOUBLE_EQ(m.instrs[0].issue, 5.5);
  EXPECT_DOUBLE_EQ(m.instrs[0].end, 7.5);
  EXPECT_EQ(m.instrs[1].stream, "track 4");
  ASSERT_EQ(m.lanes.size(), 2u);
  EXPECT_EQ(m.lanes[0].name, "worker");
}

TEST(TraceModelTest, AnEmptyTraceIsValid) {
  const TraceModel m = ParseTrace(R"({"traceEvents": []})");
  EXPECT_TRUE(m.instrs.empty());
  EXPECT_TRUE(m.lanes.empty());
}

TEST(TraceModelTest, RefusesTextThatIsNotJson) {
  ExpectRefused("{\"traceEvents\": [", {"not valid JSON"});
  ExpectRefused("cmake_minimum_required(VERSION 3.25)", {"not valid JSON"});
}

TEST(TraceModelTest, RefusesJsonThatIsNotATrace) {
  ExpectRefused(R"({"events": []})", {"traceEvents"});
  ExpectRefused(R"({"traceEvents": 3})", {"traceEvents"});
  ExpectRefused("42", {"number"});
}

TEST(TraceModelTest, RefusesMalformedEventsNamingTheEventAndField) {
  ExpectRefused(R"([{"ph": "X", "name": "a", "ts": "soon", "dur": 1}])",
                {"event 0", "\"ts\"", "\"soon\""});
  ExpectRefused(R"([{"ph": "X", "name": "a", "ts": 0, "dur": 1}, {"ph": "X", "name": "b",
                    "ts": 0, "dur": -4}])",
                {"event 1", "dur", "negative"});
  ExpectRefused(R"([{"ph": "X", "name": "a", "dur": 1}])", {"event 0", "ts"});
  ExpectRefused(R"([{"ph": "X", "name": "a", "ts": 0, "args": {"id": 1, "deps": ["x"]}}])",
                {"event 0", "deps"});
  ExpectRefused(R"([7])", {"event 0", "object"});
}

TEST(TraceModelTest, RefusesAnInstructionIdUsedTwice) {
  ExpectRefused(R"([{"ph": "X", "name": "a", "ts": 0, "args": {"id": 3}},
                    {"ph": "X", "name": "b", "ts": 1, "args": {"id": 3}}])",
                {"id 3", "more than one"});
}

TEST(TraceModelTest, LoadTraceNamesAMissingFile) {
  const std::string path = ::testing::TempDir() + "/no_such_dir_ofl/trace.json";
  try {
    LoadTrace(path);
    ADD_FAILURE() << "loaded a missing file";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

TEST(TraceModelTest, LoadTraceRefusesADirectoryAndAnEmptyFile) {
  EXPECT_THROW(LoadTrace(::testing::TempDir()), TraceError);
  const std::string empty = ::testing::TempDir() + "/ofl_empty_trace.json";
  { std::ofstream(empty).flush(); }
  try {
    LoadTrace(empty);
    ADD_FAILURE() << "loaded an empty file";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
  std::remove(empty.c_str());
}

TEST(TraceModelTest, LoadTraceReadsWhatWasWritten) {
  const std::string path = ::testing::TempDir() + "/ofl_hand_made_trace.json";
  { std::ofstream(path) << testing::kHandMadeTrace; }
  const TraceModel m = LoadTrace(path);
  EXPECT_EQ(m.instrs.size(), 4u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ofl::vm_trace
