// Tests the built-in workloads recorded the way ofl_vm_trace records them: each computes the right
// result, its trace reads back self-consistent (every instruction once, edges to earlier ones,
// issue <= ready <= start <= end), fanout shows cross-stream edges and ReleaseTensor instructions,
// and the summary of a recorded trace counts what ran. Unknown names and unusable devices throw.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/tools/trace_test_util.h"
#include "tools/vm_trace/summary.h"
#include "tools/vm_trace/trace_model.h"
#include "tools/vm_trace/trace_recorder.h"
#include "tools/vm_trace/workloads.h"

namespace ofl::vm_trace {
namespace {

TraceModel Record(const std::string& name, int64_t iters) {
  WorkloadOptions options;
  options.iters = iters;
  options.out = nullptr;
  TraceRecorder recorder;
  recorder.Start();
  RunWorkload(name, options);
  return ParseTrace(recorder.Stop(), name);
}

std::map<std::string, int64_t> OpCounts(const TraceModel& m) {
  std::map<std::string, int64_t> counts;
  for (const TraceInstr& in : m.instrs) ++counts[in.op];
  return counts;
}

// Each instruction on the path depends on the one before it.
void ExpectValidChain(const TraceModel& m, const CriticalPath& path) {
  ASSERT_FALSE(path.ids.empty());
  for (size_t k = 1; k < path.ids.size(); ++k) {
    const int64_t at = m.IndexOf(path.ids[k]);
    ASSERT_GE(at, 0);
    const auto& deps = m.instrs[static_cast<size_t>(at)].deps;
    EXPECT_NE(std::find(deps.begin(), deps.end(), path.ids[k - 1]), deps.end())
        << "#" << path.ids[k] << " does not depend on #" << path.ids[k - 1];
  }
}

TEST(WorkloadTraceTest, FanoutCrossesStreamsAndReleasesTensorsWithInstructions) {
  const TraceModel m = Record("fanout", 2);
  testing::ExpectConsistent(m);
  const auto counts = OpCounts(m);
  EXPECT_EQ(counts.at("copy"), 2 * 4);
  EXPECT_EQ(counts.at("checksum"), 1);
  EXPECT_EQ(counts.at("join"), 1);
  EXPECT_EQ(counts.at("gate"), 3);
  std::vector<std::string> lanes;
  for (const TraceLane& l : m.lanes) lanes.push_back(l.name);
  for (const char* s : {"cpu:0/compute", "cpu:0/h2d", "cpu:0/d2h", "cpu:0/aux"}) {
    EXPECT_NE(std::find(lanes.begin(), lanes.end(), s), lanes.end()) << s;
  }
  // The source dies while readers on four streams are parked: a ReleaseTensor waits for them.
  int64_t releases = 0, cross = 0;
  for (const TraceInstr& in : m.instrs) {
    if (in.policy == "ReleaseTensor") ++releases;
    for (bool c : in.cross_stream) cross += c ? 1 : 0;
  }
  EXPECT_GE(releases, 1);
  EXPECT_GE(cross, 6);  // at least the side-stream copies' edges to the source's writer
  for (const TraceInstr& in : m.instrs) EXPECT_EQ(in.error, "") << in.op;
}

TEST(WorkloadTraceTest, SummaryOfARecordedTraceCountsWhatRan) {
  const TraceModel m = Record("fanout", 2);
  const Summary s = Summarize(m);
  EXPECT_EQ(s.instructions, static_cast<int64_t>(m.instrs.size()));
  const auto counts = OpCounts(m);
  int64_t total = 0;
  for (const OpStats& o : s.ops) {
    EXPECT_EQ(o.count, counts.at(o.op)) << o.op;
    EXPECT_LE(o.p50_latency_us, o.p99_latency_us) << o.op;
    total += o.count;
  }
  EXPECT_EQ(total, s.instructions);
  EXPECT_EQ(s.lanes.size(), m.lanes.size());
  for (const LaneStats& l : s.lanes) {
    EXPECT_GE(l.busy_fraction, 0.0) << l.name;
    EXPECT_LE(l.busy_fraction, 1.0) << l.name;
  }
  ExpectValidChain(m, s.critical_path);
  EXPECT_LE(s.critical_path.run_us, s.span_us);
  ASSERT_FALSE(s.pools.empty());
  EXPECT_EQ(s.pools[0].device, "cpu:0");
  EXPECT_GT(s.pools[0].allocs, 0);
  EXPECT_GE(s.pools[0].hit_rate, 0.0);
  EXPECT_LE(s.pools[0].hit_rate, 1.0);
  EXPECT_GE(s.pools[0].peak_reserved, s.pools[0].peak_allocated);
}

TEST(WorkloadTraceTest, ChainRunsItsOpsRoundAfterRound) {
  const TraceModel m = Record("chain", 4);
  testing::ExpectConsistent(m);
  const auto counts = OpCounts(m);
  EXPECT_EQ(counts.at("repeat"), 4);
  EXPECT_EQ(counts.at("repeat_backward"), 4);
  EXPECT_EQ(counts.at("expand_backward"), 4);
  ExpectValidChain(m, Summarize(m).critical_path);
}

TEST(WorkloadTraceTest, StressIssuesTwoOpsPerIteration) {
  const TraceModel m = Record("stress", 100);
  testing::ExpectConsistent(m);
  EXPECT_EQ(OpCounts(m).at("repeat"), 100);
}

TEST(WorkloadTraceTest, ReportsProgressUpToTheTotal) {
  WorkloadOptions options;
  options.iters = 50;
  options.out = nullptr;
  int64_t last_done = -1, last_total = -1, calls = 0;
  options.progress = [&](int64_t done, int64_t total) {
    EXPECT_GT(done, last_done);
    last_done = done;
    last_total = total;
    ++calls;
  };
  RunWorkload("stress", options);
  EXPECT_GT(calls, 0);
  EXPECT_EQ(last_done, 50);
  EXPECT_EQ(last_total, 50);
}

TEST(WorkloadTraceTest, UnknownWorkloadIsRefusedWithTheChoices) {
  WorkloadOptions options;
  options.out = nullptr;
  try {
    RunWorkload("nope", options);
    ADD_FAILURE() << "ran an unknown workload";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("demo, chain, fanout, stress"), std::string::npos) << msg;
  }
  options.iters = -1;
  EXPECT_THROW(RunWorkload("stress", options), InvalidArgument);
}

TEST(WorkloadTraceTest, CudaDeviceWithoutCudaIsADeviceError) {
  WorkloadOptions options;
  options.out = nullptr;
  options.device = Device("cuda:0");
  try {
    RunWorkload("demo", options);
    GTEST_SKIP() << "this build and machine can use cuda:0";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ofl::vm_trace
