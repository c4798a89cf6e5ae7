// Tests the multi-process side of the trace tool on a hand-made two-rank program whose answers are
// known: collective op names taken apart, the ranks' traces merged onto one time origin (a process
// per rank, flow ids kept unique, an arrow per waiting rank from the last one to arrive), the
// merged file read back as one model per rank, and the per-rank busy time and collective waits.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/tools/trace_test_util.h"
#include "tools/vm_trace/global_trace.h"
#include "tools/vm_trace/rank_summary.h"
#include "tools/vm_trace/summary.h"
#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {
namespace {

using nlohmann::json;

// One X event as the VM writes it (pid 1; times since the rank's own trace start).
std::string Instr(int id, const std::string& policy, const std::string& op, int tid, double start,
                  double end, const std::string& deps = "[]") {
  const std::string stream = tid == 1 ? "cpu:0/compute" : "cpu:0/collective";
  const std::string s = std::to_string(start), e = std::to_string(end);
  return R"({"ph": "X", "name": ")" + op + R"(", "cat": ")" + policy + R"(", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + s + R"(, "dur": )" + std::to_string(end - start) +
         R"(, "args": {"id": )" + std::to_string(id) + R"(, "policy": ")" + policy +
         R"(", "op": ")" + op + R"(", "stream": ")" + stream + R"(", "deps": )" + deps +
         R"(, "issue": )" + s + R"(, "ready": )" + s + R"(, "start": )" + s + R"(, "end": )" + e +
         R"(, "complete": )" + e + "}}";
}

std::string RankTrace(const std::vector<std::string>& instrs) {
  std::string events = R"(
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "oneflow_lite"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "cpu:0/compute"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "cpu:0/collective"}},
    {"ph": "s", "id": 1, "name": "dep", "cat": "dep", "pid": 1, "tid": 1, "ts": 1},
    {"ph": "f", "bp": "e", "id": 1, "name": "dep", "cat": "dep", "pid": 1, "tid": 2, "ts": 2})";
  for (const std::string& i : instrs) events += ",\n    " + i;
  return R"({"displayTimeUnit": "ns", "otherData": {"format": "ofl-trace-1", "version": "0.1.0"},
  "traceEvents": [)" +
         events + "]}";
}

const char* kGather = "boxing S->B (all-gather) #0 over [0, 1]";
const char* kReduce = "boxing P->B (all-reduce) #1 over [0, 1]";
const char* kLate = "boxing S->B (all-gather) #2 over [0, 1]";

// Rank 0 starts tracing at 1 ms, rank 1 10 us later. On the common origin (rank 0's):
//   rank 0: compute 0-20, all-gather #0 20-60, compute 60-70, all-reduce #1 70-80,
//           all-gather #2 80-90 (rank 1's trace stopped before it: incomplete)
//   rank 1: compute 10-40, all-gather #0 40-60, compute 60-65, all-reduce #1 65-80
// #0: rank 1 arrived last (40), rank 0 waited 20. #1: rank 0 arrived last (70), rank 1 waited 5.
std::vector<RankTraceText> TwoRanks() {
  RankTraceText r0, r1;
  r0.rank = 0;
  r0.origin_ns = 1000000;
  r0.host = "node";
  r0.json = RankTrace({Instr(1, "OpCall", "expand_backward", 1, 0, 20),
                       Instr(2, "Collective", kGather, 2, 20, 60, "[1]"),
                       Instr(3, "OpCall", "repeat", 1, 60, 70, "[2]"),
                       Instr(4, "Collective", kReduce, 2, 70, 80, "[3]"),
                       Instr(5, "Collective", kLate, 2, 80, 90, "[4]")});
  r1.rank = 1;
  r1.origin_ns = 1010000;
  r1.host = "node";
  r1.json = RankTrace({Instr(1, "OpCall", "expand_backward", 1, 0, 30),
                       Instr(2, "Collective", kGather, 2, 30, 50, "[1]"),
                       Instr(3, "OpCall", "repeat", 1, 50, 55, "[2]"),
                       Instr(4, "Collective", kReduce, 2, 55, 70, "[3]")});
  return {r1, r0};  // any order
}

std::vector<json> EventsOf(const json& doc, const std::string& ph, const std::string& cat = "") {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

TEST(CollectiveNameTest, TakesTheOpNameApart) {
  CollectiveName n;
  ASSERT_TRUE(ParseCollectiveName("boxing S->B (all-gather) #3 over [0, 1, 2, 3]", &n));
  EXPECT_EQ(n.kind, "boxing S->B (all-gather)");
  EXPECT_EQ(n.seq, 3);
  EXPECT_EQ(n.ranks, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_TRUE(ParseCollectiveName("to_global: shape exchange #12 over [1]", &n));
  EXPECT_EQ(n.kind, "to_global: shape exchange");
  EXPECT_EQ(n.seq, 12);
  EXPECT_EQ(n.ranks, (std::vector<int>{1}));
  ASSERT_TRUE(ParseCollectiveName("a #b #7 over [2,5]", &n));  // the last " #" counts
  EXPECT_EQ(n.kind, "a #b");
  EXPECT_EQ(n.ranks, (std::vector<int>{2, 5}));
  for (const char* bad : {"expand", "boxing #x over [0]", "boxing #1 over []", "boxing #1 over [0",
                          "boxing #1 over [0, b]", "boxing #-1 over [0]", "boxing over [0]"}) {
    EXPECT_FALSE(ParseCollectiveName(bad, &n)) << bad;
  }
  TraceInstr in;
  in.policy = "Collective";
  in.op = kGather;
  EXPECT_EQ(OpFamily(in), "boxing S->B (all-gather) over [0, 1]");
  in.policy = "OpCall";
  EXPECT_EQ(OpFamily(in), kGather);
}

TEST(GlobalTraceTest, MergesOneProcessPerRankOnTheEarliestOrigin) {
  const json doc = json::parse(MergeRankTraces(TwoRanks()));
  EXPECT_EQ(doc["otherData"]["format"], "ofl-trace-1");
  EXPECT_EQ(doc["otherData"]["merged"], true);
  EXPECT_EQ(doc["otherData"]["origin_ns"], 1000000);
  EXPECT_EQ(doc["otherData"]["clock_aligned"], true);
  ASSERT_EQ(doc["otherData"]["ranks"].size(), 2u);
  EXPECT_EQ(doc["otherData"]["ranks"][1]["shift_us"], 10.0);

  std::vector<std::pair<int, std::string>> processes;
  for (const json& e : EventsOf(doc, "M")) {
    if (e["name"] == "process_name") processes.emplace_back(e["pid"], e["args"]["name"]);
    EXPECT_TRUE(e["pid"] == 1 || e["pid"] == 2) << e.dump();
  }
  EXPECT_EQ(processes, (std::vector<std::pair<int, std::string>>{{1, "rank 0"}, {2, "rank 1"}}));

  // Rank 1's times moved by 10 us, in the event and in its args.
  bool found = false;
  for (const json& e : EventsOf(doc, "X")) {
    if (e["pid"] == 2 && e["args"]["op"] == kGather) {
      found = true;
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 40);
      EXPECT_DOUBLE_EQ(e["args"]["issue"].get<double>(), 40);
      EXPECT_DOUBLE_EQ(e["args"]["end"].get<double>(), 60);
    }
  }
  EXPECT_TRUE(found);

  // Both ranks' dependence arrows had id 1: they stay two arrows.
  std::vector<uint64_t> dep_starts;
  for (const json& e : EventsOf(doc, "s", "dep")) dep_starts.push_back(e["id"]);
  EXPECT_EQ(dep_starts.size(), 2u);
  EXPECT_NE(dep_starts[0], dep_starts[1]);

  // One arrow per waiting rank: #0 from rank 1 (last, at 40) to rank 0; #1 from rank 0 (last, at
  // 70) to rank 1; none for #2 (rank 1 has no record of it). Ends at the same instant, inside the
  // collective's slice on the collective track (tid 2).
  const std::vector<json> starts = EventsOf(doc, "s", "collective");
  const std::vector<json> ends = EventsOf(doc, "f", "collective");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(starts[k]["id"], ends[k]["id"]);
    EXPECT_NE(starts[k]["id"], dep_starts[0]);
    EXPECT_NE(starts[k]["id"], dep_starts[1]);
    EXPECT_EQ(starts[k]["tid"], 2);
    EXPECT_EQ(ends[k]["tid"], 2);
    EXPECT_EQ(ends[k]["bp"], "e");
    EXPECT_GE(ends[k]["ts"].get<double>(), starts[k]["ts"].get<double>());
  }
  EXPECT_EQ(starts[0]["args"]["collective"], kGather);
  EXPECT_EQ(starts[0]["pid"], 2);
  EXPECT_EQ(ends[0]["pid"], 1);
  EXPECT_NEAR(starts[0]["ts"].get<double>(), 40, 0.01);
  EXPECT_NEAR(ends[0]["ts"].get<double>(), 40, 0.01);
  EXPECT_DOUBLE_EQ(ends[0]["args"]["waited_us"].get<double>(), 20);
  EXPECT_EQ(starts[1]["args"]["collective"], kReduce);
  EXPECT_EQ(starts[1]["pid"], 1);
  EXPECT_EQ(ends[1]["pid"], 2);
  EXPECT_NEAR(ends[1]["ts"].get<double>(), 70, 0.01);
  EXPECT_DOUBLE_EQ(ends[1]["args"]["waited_us"].get<double>(), 5);
}

TEST(GlobalTraceTest, AMergedTraceReadsAsOneModelPerRank) {
  const TraceModel m = ParseTrace(MergeRankTraces(TwoRanks()), "merged");
  ASSERT_TRUE(m.merged());
  EXPECT_EQ(m.format, "ofl-trace-1");
  EXPECT_TRUE(m.instrs.empty());
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_EQ(m.ranks[0].rank, 0);
  EXPECT_EQ(m.ranks[1].rank, 1);
  EXPECT_EQ(m.ranks[1].host, "node");
  ASSERT_EQ(m.ranks[0].model.instrs.size(), 5u);
  ASSERT_EQ(m.ranks[1].model.instrs.size(), 4u);
  const TraceInstr& gather1 = m.ranks[1].model.instrs[1];
  EXPECT_EQ(gather1.op, kGather);
  EXPECT_DOUBLE_EQ(gather1.start, 40);
  EXPECT_EQ(gather1.deps, (std::vector<uint64_t>{1}));  // ids stay the rank's own
  ASSERT_EQ(m.ranks[1].model.lanes.size(), 2u);
  EXPECT_EQ(m.ranks[1].model.lanes[1].name, "cpu:0/collective");
  for (const RankModel& r : m.ranks) testing::ExpectConsistent(r.model);
  // A rank's own summary counts the runs of one kind of collective together.
  const Summary s = Summarize(m.ranks[0].model);
  bool gathers = false;
  for (const OpStats& o : s.ops) gathers |= o.op == "boxing S->B (all-gather) over [0, 1]";
  EXPECT_TRUE(gathers);
}

TEST(GlobalTraceTest, PairsTheSameCollectiveAcrossRanks) {
  const TraceModel m = ParseTrace(MergeRankTraces(TwoRanks()));
  const std::vector<CollectiveGroup> groups = PairCollectives(RanksOf(m));
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].op, kGather);
  ASSERT_TRUE(groups[0].complete());
  EXPECT_EQ(groups[0].last_rank, 1);
  EXPECT_DOUBLE_EQ(groups[0].last_start, 40);
  EXPECT_DOUBLE_EQ(groups[0].members[0].wait_us, 20);
  EXPECT_DOUBLE_EQ(groups[0].members[1].wait_us, 0);
  EXPECT_EQ(groups[1].op, kReduce);
  EXPECT_EQ(groups[1].last_rank, 0);
  EXPECT_DOUBLE_EQ(groups[1].members[0].wait_us, 0);
  EXPECT_DOUBLE_EQ(groups[1].members[1].wait_us, 5);
  EXPECT_DOUBLE_EQ(groups[1].total_wait_us(), 5);
  EXPECT_EQ(groups[2].op, kLate);
  EXPECT_FALSE(groups[2].complete());
  EXPECT_EQ(groups[2].last_rank, -1);
}

TEST(RankSummaryTest, BusyTimeAndCollectiveWaitsPerRank) {
  const TraceModel m = ParseTrace(MergeRankTraces(TwoRanks()));
  ASSERT_TRUE(HasRankSummary(m));
  const RankSummary s = SummarizeRanks(m);
  EXPECT_TRUE(s.merged);
  EXPECT_FALSE(s.hosts_differ);
  EXPECT_DOUBLE_EQ(s.span_us, 90);
  EXPECT_EQ(s.groups, 3);
  EXPECT_EQ(s.complete, 2);
  ASSERT_EQ(s.ranks.size(), 2u);
  const RankStats& r0 = s.ranks[0];
  const RankStats& r1 = s.ranks[1];
  // Rank 0: 0-20 + transfer 40-60 + 60-70 + 70-80 + the incomplete #2 whole (80-90).
  EXPECT_DOUBLE_EQ(r0.busy_us, 70);
  EXPECT_DOUBLE_EQ(r0.busy_fraction, 70.0 / 90.0);
  EXPECT_DOUBLE_EQ(r0.wait_us, 20);
  EXPECT_DOUBLE_EQ(r0.collective_us, 60);
  EXPECT_EQ(r0.collectives, 3);
  EXPECT_EQ(r0.unpaired, 1);
  EXPECT_EQ(r0.arrived_last, 1);
  EXPECT_EQ(r0.max_wait_op, kGather);
  EXPECT_EQ(r0.instructions, 5);
  // Rank 1: 10-40 + 40-60 + 60-65 + transfer 70-80.
  EXPECT_DOUBLE_EQ(r1.busy_us, 65);
  EXPECT_DOUBLE_EQ(r1.wait_us, 5);
  EXPECT_DOUBLE_EQ(r1.collective_us, 35);
  EXPECT_EQ(r1.collectives, 2);
  EXPECT_EQ(r1.unpaired, 0);
  EXPECT_EQ(r1.arrived_last, 1);
  EXPECT_DOUBLE_EQ(r1.max_wait_us, 5);
  ASSERT_EQ(s.longest_waits.size(), 2u);
  EXPECT_EQ(s.longest_waits[0].op, kGather);
  EXPECT_EQ(s.longest_waits[0].last_rank, 1);
  EXPECT_DOUBLE_EQ(s.longest_waits[0].total_wait_us, 20);
  EXPECT_EQ(s.longest_waits[1].last_rank, 0);

  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  PrintRankSummary(s, f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  EXPECT_NE(text.find("2 process(es) over 90.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("70.0 us   77.8%"), std::string::npos) << text;
  EXPECT_NE(text.find("20.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("3 distinct, 2 recorded by every rank"), std::string::npos) << text;
  EXPECT_NE(text.find("waiting for rank 1"), std::string::npos) << text;
  EXPECT_EQ(text.find("different hosts"), std::string::npos) << text;
}

TEST(RankSummaryTest, DifferentHostsAreFlaggedAsUnaligned) {
  std::vector<RankTraceText> ranks = TwoRanks();
  ranks[0].host = "other";
  const std::string merged = MergeRankTraces(ranks);
  EXPECT_EQ(json::parse(merged)["otherData"]["clock_aligned"], false);
  const RankSummary s = SummarizeRanks(ParseTrace(merged));
  EXPECT_TRUE(s.hosts_differ);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  PrintRankSummary(s, f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  EXPECT_NE(text.find("different hosts (node, other)"), std::string::npos) << text;
}

TEST(RankSummaryTest, OneProcessIsRankZero) {
  // The hand-made single-process trace runs no collective: no per-rank section.
  EXPECT_FALSE(HasRankSummary(ParseTrace(testing::kHandMadeTrace)));
  // One rank of the two, alone: its collectives have no peers here, so they count whole.
  const TraceModel m = ParseTrace(TwoRanks()[1].json);
  ASSERT_FALSE(m.merged());
  ASSERT_TRUE(HasRankSummary(m));
  const RankSummary s = SummarizeRanks(m);
  EXPECT_FALSE(s.merged);
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_EQ(s.ranks[0].unpaired, 3);
  EXPECT_DOUBLE_EQ(s.ranks[0].wait_us, 0);
  EXPECT_DOUBLE_EQ(s.ranks[0].busy_us, 90);
}

TEST(GlobalTraceTest, RefusesBadInput) {
  std::vector<RankTraceText> ranks = TwoRanks();
  ranks[1].rank = ranks[0].rank;
  EXPECT_THROW(MergeRankTraces(ranks), TraceError);
  EXPECT_THROW(MergeRankTraces({}), TraceError);
  ranks = TwoRanks();
  ranks[0].json = "{";
  try {
    MergeRankTraces(ranks);
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1's trace: not valid JSON"), std::string::npos)
        << e.what();
  }
  // A merged trace whose other process holds instructions.
  json doc = json::parse(MergeRankTraces(TwoRanks()));
  doc["traceEvents"].push_back(json::parse(Instr(9, "OpCall", "stray", 1, 0, 1)));
  doc["traceEvents"].back()["pid"] = 7;
  EXPECT_THROW(ParseTrace(doc.dump()), TraceError);
}

TEST(GlobalTraceTest, ProcessesThatAreNotRanksStillReadAsOne) {
  // Another producer's trace of two processes: one model, as before merged traces existed.
  const TraceModel m = ParseTrace(R"([
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "browser"}},
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "name": "b", "pid": 2, "tid": 5, "ts": 0, "dur": 1},
    {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 3, "dur": 1}])");
  EXPECT_FALSE(m.merged());
  ASSERT_EQ(m.instrs.size(), 3u);
  EXPECT_EQ(m.instrs[0].op, "a");  // ids in file order
  EXPECT_EQ(m.instrs[1].op, "b");
  EXPECT_EQ(m.instrs[2].op, "c");
  EXPECT_EQ(m.lanes.size(), 2u);
}

}  // namespace
}  // namespace ofl::vm_trace
