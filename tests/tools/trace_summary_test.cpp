// Tests that the summary of a trace is right: counts and issue->end percentiles per op, busy
// fraction per stream, the critical path through the dependence edges, and the pool's hit rate,
// peaks and fragmentation, on a hand-made trace whose answers are known, and that it prints them.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/tools/trace_test_util.h"
#include "tools/vm_trace/summary.h"
#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {
namespace {

const OpStats* FindOp(const Summary& s, const std::string& op) {
  for (const OpStats& o : s.ops) {
    if (o.op == op) return &o;
  }
  return nullptr;
}

TEST(PercentileTest, NearestRankOfUnsortedValues) {
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({7}, 99), 7);
  EXPECT_EQ(Percentile({39, 13}, 50), 13);
  EXPECT_EQ(Percentile({39, 13}, 99), 39);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(Percentile(hundred, 50), 50);
  EXPECT_EQ(Percentile(hundred, 99), 99);
  EXPECT_EQ(Percentile(hundred, 100), 100);
}

TEST(TraceSummaryTest, CountsAndLatencyPercentilesPerOp) {
  const Summary s = Summarize(ParseTrace(testing::kHandMadeTrace));
  EXPECT_EQ(s.instructions, 4);
  EXPECT_EQ(s.errors, 1);
  ASSERT_EQ(s.ops.size(), 3u);
  EXPECT_EQ(s.ops[0].op, "copy");  // the most frequent first
  const OpStats* copy = FindOp(s, "copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->count, 2);
  EXPECT_DOUBLE_EQ(copy->p50_latency_us, 13);  // #3: issued at 2, ended at 15
  EXPECT_DOUBLE_EQ(copy->p99_latency_us, 39);  // #2: issued at 1, ended at 40
  EXPECT_DOUBLE_EQ(copy->p50_run_us, 5);
  EXPECT_DOUBLE_EQ(copy->total_run_us, 35);
  ASSERT_NE(FindOp(s, "from_host"), nullptr);
  EXPECT_EQ(FindOp(s, "from_host")->count, 1);
  ASSERT_NE(FindOp(s, "join"), nullptr);
  EXPECT_EQ(FindOp(s, "join")->errors, 1);
}

TEST(TraceSummaryTest, BusyFractionIsCoveredTimeOverTheSpan) {
  const Summary s = Summarize(ParseTrace(testing::kHandMadeTrace));
  EXPECT_DOUBLE_EQ(s.span_us, 50);
  ASSERT_EQ(s.lanes.size(), 2u);
  EXPECT_EQ(s.lanes[0].name, "cpu:0/compute");
  EXPECT_EQ(s.lanes[0].instructions, 3);
  EXPECT_DOUBLE_EQ(s.lanes[0].busy_us, 25);
  EXPECT_DOUBLE_EQ(s.lanes[0].busy_fraction, 0.5);
  EXPECT_EQ(s.lanes[1].name, "cpu:0/h2d");
  EXPECT_DOUBLE_EQ(s.lanes[1].busy_fraction, 0.6);
}

TEST(TraceSummaryTest, OverlappingBoxesOnALaneCountOnce) {
  // Two events on one track that overlap (another producer's trace): busy is their union.
  const TraceModel m = ParseTrace(R"([
    {"ph": "X", "name": "a", "tid": 5, "ts": 0, "dur": 10},
    {"ph": "X", "name": "b", "tid": 5, "ts": 5, "dur": 10},
    {"ph": "X", "name": "c", "tid": 6, "ts": 0, "dur": 20}])");
  const Summary s = Summarize(m);
  ASSERT_EQ(s.lanes.size(), 2u);
  EXPECT_DOUBLE_EQ(s.lanes[0].busy_us, 15);
  EXPECT_DOUBLE_EQ(s.lanes[0].busy_fraction, 0.75);
  EXPECT_DOUBLE_EQ(s.lanes[1].busy_fraction, 1.0);
}

TEST(TraceSummaryTest, CriticalPathIsTheHeaviestDependenceChain) {
  const Summary s = Summarize(ParseTrace(testing::kHandMadeTrace));
  // #1 (10) -> #2 (30) -> #4 (10) beats #1 -> #3 (5) -> #4; the edge to #99 (not in the trace)
  // is ignored.
  EXPECT_EQ(s.critical_path.ids, (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_DOUBLE_EQ(s.critical_path.run_us, 50);
  EXPECT_EQ(s.dep_edges, 4);
  EXPECT_EQ(s.cross_stream_edges, 2);
}

TEST(TraceSummaryTest, PoolHitRatePeaksAndFragmentation) {
  const Summary s = Summarize(ParseTrace(testing::kHandMadeTrace));
  ASSERT_EQ(s.pools.size(), 1u);
  const PoolStats& p = s.pools[0];
  EXPECT_EQ(p.device, "cpu:0");
  EXPECT_EQ(p.allocs, 2);
  EXPECT_EQ(p.hits, 1);
  EXPECT_DOUBLE_EQ(p.hit_rate, 0.5);
  EXPECT_EQ(p.frees, 1);
  EXPECT_EQ(p.segment_allocs, 1);
  EXPECT_TRUE(p.has_memory);
  EXPECT_EQ(p.peak_allocated, 256);
  EXPECT_EQ(p.peak_reserved, 1024);
  EXPECT_EQ(p.end_allocated, 128);
  EXPECT_EQ(p.end_reserved, 1024);
  EXPECT_EQ(p.fragmentation(), 896);
}

TEST(TraceSummaryTest, LargestFreeBlockIsReplayedFromAddresses) {
  // A 1000-byte segment at 1000: blocks at [1000,1100), [1100,1400), [1400,1500); the middle one
  // is freed, leaving free ranges of 300 and 500 bytes.
  auto event = [](const char* kind, int ts, int address, int bytes) {
    return std::string(R"({"ph": "i", "s": "t", "name": ")") + kind +
           R"(", "pid": 1, "tid": 2000, "ts": )" + std::to_string(ts) + R"(, "args": {"bytes": )" +
           std::to_string(bytes) + R"(, "address": )" + std::to_string(address) + "}}";
  };
  const std::string head = R"({"traceEvents": [
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2000, "args": {"name": "pool cpu:0"}},)";
  const std::string layout = event("segment_alloc", 0, 1000, 1000) + "," +
                             event("alloc", 1, 1000, 100) + "," + event("alloc", 2, 1100, 300) +
                             "," + event("alloc", 3, 1400, 100) + "," + event("free", 4, 1100, 300);
  Summary s = Summarize(ParseTrace(head + layout + "]}"));
  ASSERT_EQ(s.pools.size(), 1u);
  EXPECT_EQ(s.pools[0].largest_free_block, 500);
  // A block in a segment the trace never saw: the layout is unknown.
  s = Summarize(ParseTrace(head + layout + "," + event("alloc", 5, 9000, 8) + "]}"));
  EXPECT_EQ(s.pools[0].largest_free_block, -1);
  // Without addresses (the hand-made trace) it is unknown too.
  EXPECT_EQ(Summarize(ParseTrace(testing::kHandMadeTrace)).pools[0].largest_free_block, -1);
}

TEST(TraceSummaryTest, WithoutPoolEventsTheInstructionsAllocationsGiveTheHitRate) {
  const TraceModel m = ParseTrace(R"({"traceEvents": [
    {"ph": "X", "name": "a", "tid": 1, "ts": 0, "dur": 1,
     "args": {"id": 1, "allocs": [{"blob": 1, "bytes": 8, "hit": false},
                                  {"blob": 2, "bytes": 8, "hit": true}]}},
    {"ph": "X", "name": "b", "tid": 1, "ts": 1, "dur": 1,
     "args": {"id": 2, "allocs": [{"blob": 3, "bytes": 8, "hit": true}]}}]})");
  const Summary s = Summarize(m);
  ASSERT_EQ(s.pools.size(), 1u);
  EXPECT_EQ(s.pools[0].allocs, 3);
  EXPECT_EQ(s.pools[0].hits, 2);
  EXPECT_FALSE(s.pools[0].has_memory);
}

TEST(TraceSummaryTest, PrintsEverySection) {
  const TraceModel m = ParseTrace(testing::kHandMadeTrace);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  PrintSummary(Summarize(m), m, f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  EXPECT_NE(text.find("4 instructions over 50.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("1 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu:0/h2d"), std::string::npos) << text;
  EXPECT_NE(text.find("60.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("critical path: 3 instruction(s), 50.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("hit rate 50.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("fragmentation (reserved - allocated) 896 B"), std::string::npos) << text;
}

TEST(TraceSummaryTest, LongCriticalPathIsElidedInTheMiddle) {
  std::string events = R"({"traceEvents": [)";
  for (int i = 1; i <= 50; ++i) {
    events += std::string(i > 1 ? "," : "") + R"({"ph": "X", "name": "op", "tid": 1, "ts": )" +
              std::to_string(i) + R"(, "dur": 1, "args": {"id": )" + std::to_string(i) +
              (i > 1 ? R"(, "deps": [)" + std::to_string(i - 1) + "]" : std::string()) + "}}";
  }
  events += "]}";
  const TraceModel m = ParseTrace(events);
  const Summary s = Summarize(m);
  EXPECT_EQ(s.critical_path.ids.size(), 50u);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  PrintSummary(s, m, f, 10);
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  EXPECT_NE(text.find("... 40 more ..."), std::string::npos) << text;
  EXPECT_NE(text.find("#1 "), std::string::npos) << text;
  EXPECT_NE(text.find("#50 "), std::string::npos) << text;
  EXPECT_EQ(text.find("#25 "), std::string::npos) << text;
}

}  // namespace
}  // namespace ofl::vm_trace
