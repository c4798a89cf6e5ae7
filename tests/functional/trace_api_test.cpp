// Tests the public tracing API: ofl::trace::start / stop(path) write a Chrome trace of exactly the
// work in between that parses back (nlohmann) with every invariant of the format; a path that
// cannot be written throws InvalidArgument naming it and leaves the recording on; and
// OFL_TRACE=<path> traces a whole program and writes the file when it exits (checked in a child
// process).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "oneflow_lite/version.h"
#include "tests/vm/trace_json_check.h"

namespace ofl {
namespace {

using testing::ParseAndCheckTrace;
using testing::ParsedTrace;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "ofl_" + std::to_string(getpid()) + "_" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<uint64_t> WrittenBlobs(const ParsedTrace& t) {
  std::set<uint64_t> blobs;
  for (const auto& [id, e] : t.instrs) {
    for (const auto& b : e["args"]["writes"]) blobs.insert(b.get<uint64_t>());
  }
  return blobs;
}

// Leaves tracing as the process had it (OFL_TRACE / OFL_TRACE_VM may have turned it on).
class TraceApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    was_tracing_ = trace::is_tracing();
    sync();
  }
  void TearDown() override {
    const std::string scratch = TempPath("teardown.json");
    if (trace::is_tracing()) trace::stop(scratch);
    if (was_tracing_) trace::start();
    std::remove(scratch.c_str());
  }

 private:
  bool was_tracing_ = false;
};

TEST_F(TraceApiTest, StartStopWritesATraceOfExactlyTheWorkInBetween) {
  const Tensor before = tensor<float>({9, 9}, Shape({2}));
  sync();
  trace::start();
  EXPECT_TRUE(trace::is_tracing());
  const Tensor x = tensor<float>({1, 2, 3}, Shape({3, 1}));
  const Tensor y = x.expand({3, 2}).contiguous().repeat({2, 1});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  const std::string path = TempPath("start_stop.json");
  trace::stop(path);
  EXPECT_FALSE(trace::is_tracing());
  const Tensor after = tensor<float>({8}, Shape({1})).repeat({4});
  sync();

  ParsedTrace t;
  ASSERT_NO_FATAL_FAILURE(ParseAndCheckTrace(ReadFile(path), &t));
  EXPECT_EQ(t.doc["otherData"]["version"], std::string(version()));
  std::set<std::string> ops;
  for (const auto& [id, e] : t.instrs) ops.insert(e["args"]["op"].get<std::string>());
  for (const char* op : {"from_host", "repeat", "to_vector"}) EXPECT_TRUE(ops.count(op)) << op;
  const std::set<uint64_t> written = WrittenBlobs(t);
  EXPECT_TRUE(written.count(x.impl()->blob()->id()));
  EXPECT_TRUE(written.count(y.impl()->blob()->id()));
  EXPECT_FALSE(written.count(before.impl()->blob()->id())) << "work from before start()";
  EXPECT_FALSE(written.count(after.impl()->blob()->id())) << "work from after stop()";
  // y's data moved through the pool while recording: its allocation shows on the counter track.
  bool y_alloc = false;
  for (const auto& p : t.pool_events) {
    if (p["name"] == "alloc" && p["args"]["blob"] == y.impl()->blob()->id()) y_alloc = true;
  }
  EXPECT_TRUE(y_alloc);
  EXPECT_FALSE(t.counters.empty());
  std::remove(path.c_str());
}

TEST_F(TraceApiTest, StopToAnUnwritablePathThrowsNamingItAndKeepsRecording) {
  trace::start();
  const Tensor x = tensor<float>({1, 2}, Shape({2})).repeat({2});
  const std::string bad = TempPath("missing_dir/trace.json");
  try {
    trace::stop(bad);
    ADD_FAILURE() << "stop wrote into a directory that does not exist";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("trace::stop"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(trace::is_tracing());
  const std::string good = TempPath("retry.json");
  trace::stop(good);
  ParsedTrace t;
  ASSERT_NO_FATAL_FAILURE(ParseAndCheckTrace(ReadFile(good), &t));
  EXPECT_TRUE(WrittenBlobs(t).count(x.impl()->blob()->id())) << "recorded before the failed stop";
  std::remove(good.c_str());
}

TEST_F(TraceApiTest, StopWithoutStartWritesAnEmptyTrace) {
  if (trace::is_tracing()) trace::stop(TempPath("drop.json"));
  const std::string path = TempPath("empty.json");
  trace::stop(path);
  ParsedTrace t;
  ASSERT_NO_FATAL_FAILURE(ParseAndCheckTrace(ReadFile(path), &t));
  EXPECT_TRUE(t.instrs.empty());
  std::remove(path.c_str());
  std::remove(TempPath("drop.json").c_str());
}

// The child: a program that never mentions tracing, run with OFL_TRACE set.
[[noreturn]] void RunOpsAndExit() {
  if (!trace::is_tracing()) {
    std::fputs("OFL_TRACE did not turn tracing on\n", stderr);
    std::exit(3);
  }
  Tensor x = tensor<float>({1, 2, 3, 4}, Shape({2, 2}));
  for (int i = 0; i < 5; ++i) x = x.repeat({1, 2}).narrow(1, 1, 2).contiguous();
  const std::vector<float> v = x.to_vector<float>();
  // Left unread and alive at exit: the exit hook drains it before writing the trace.
  static Tensor* pending = new Tensor(x.repeat({3, 1}));
  (void)pending;
  std::fprintf(stderr, "ops done (%zu values)\n", v.size());
  std::exit(0);
}

TEST(TraceEnvTest, OflTraceWritesTheFileAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  trace::is_tracing();  // this process's runtime starts before OFL_TRACE is set
  const std::string path = TempPath("ofl_trace_env.json");
  std::remove(path.c_str());
  setenv("OFL_TRACE", path.c_str(), 1);
  EXPECT_EXIT(RunOpsAndExit(), ::testing::ExitedWithCode(0), "ops done \\(4 values\\)");
  unsetenv("OFL_TRACE");

  const std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty()) << "no trace at " << path;
  ParsedTrace t;
  ASSERT_NO_FATAL_FAILURE(ParseAndCheckTrace(text, &t));
  EXPECT_EQ(t.IdsOf("from_host").size(), 1u);
  EXPECT_EQ(t.IdsOf("to_vector").size(), 1u);
  EXPECT_EQ(t.IdsOf("repeat").size(), 6u) << "five in the loop and the one left pending at exit";
  EXPECT_FALSE(t.counters.empty());
  EXPECT_FALSE(t.pool_events.empty());
  std::remove(path.c_str());
}

TEST(TraceEnvTest, OflTraceToAnUnwritablePathLogsWhyAndKeepsTheExitCode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  trace::is_tracing();
  const std::string path = TempPath("missing_dir/trace.json");
  setenv("OFL_TRACE", path.c_str(), 1);
  EXPECT_EXIT(RunOpsAndExit(), ::testing::ExitedWithCode(0), "OFL_TRACE: .*missing_dir/trace.json");
  unsetenv("OFL_TRACE");
}

}  // namespace
}  // namespace ofl
