// Inline runs (vm/THREADING.md, "Inline runs"): a small op call issued to an idle synchronous
// stream with its inputs complete runs on the issuing thread; anything else goes to the stream's
// worker. Either way the stream's order holds and an error waits for the next wait. Host copies
// (from_host, the CPU reads) follow the same rule.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/vm/vm_test_util.h"
#include "vm/vm_testing.h"

namespace ofl::vm {
namespace {

using testing::CpuStream;
using testing::kGenerousTimeout;
using testing::Latch;
using testing::MakeCpuBlob;
using testing::ScopeGuard;
using testing::SubmitWithoutWaiting;

// What the recording kernel saw: its tag and the thread it ran on, in run order.
struct KernelRun {
  int64_t tag;
  std::thread::id thread;
};
std::mutex runs_mu;
std::vector<KernelRun> runs;
std::atomic<int> running{0};

// The attributes of the test's op calls: a tag, and milliseconds to sleep first.
const AttrSchema& RunAttrSchema() {
  static const AttrSchema* schema = [] {
    auto* s = new AttrSchema{{"tag", AttrType::kInt}, {"sleep_ms", AttrType::kInt}};
    s->set_op("inline_run_test");
    return s;
  }();
  return *schema;
}

void RecordingKernel(const KernelContext& ctx) {
  running.fetch_add(1);
  const int64_t sleep_ms = ctx.attributes.get_int("sleep_ms");
  if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  std::lock_guard<std::mutex> lock(runs_mu);
  runs.push_back({ctx.attributes.get_int("tag"), std::this_thread::get_id()});
}

void ThrowingKernel(const KernelContext&) {
  throw InvalidArgument("inline_run_test: the kernel rejects value 7");
}

std::vector<KernelRun> TakeRuns() {
  std::lock_guard<std::mutex> lock(runs_mu);
  return std::exchange(runs, {});
}

// A float output of `bytes` bytes on cpu:0, as an operand.
BlobArg Output(BlobPtr blob) {
  BlobArg a;
  a.shape = Shape({static_cast<int64_t>(blob->bytes() / 4)});
  a.stride = Shape({1});
  a.blob = std::move(blob);
  return a;
}

InstrRef IssueOp(kernels::KernelFn fn, int64_t tag, int64_t sleep_ms, size_t bytes,
                 std::vector<BlobArg> inputs = {}) {
  InstrRef ref;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    ref = b->OpCall("inline_run_test", fn, std::move(inputs), {Output(MakeCpuBlob(bytes))},
                    Attrs(RunAttrSchema(), tag, sleep_ms));
  });
  return ref;
}

class InlineRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VirtualMachine::Get().Sync();
    // The worker counts an instruction as run a moment after it published it done.
    ASSERT_TRUE(testing::WaitUntil([] { return CpuStream(StreamRole::kCompute)->idle(); }));
    TakeRuns();
    running = 0;
  }
  VirtualMachine& vm_ = VirtualMachine::Get();
  ScopeGuard restore_{
      [limit = VirtualMachine::Get().inline_bytes()] { VmTesting::SetInlineBytes(limit); }};
};

TEST_F(InlineRunTest, SmallOpOnAnIdleCpuStreamRunsOnTheIssuingThreadBeforeTheCallReturns) {
  VmTesting::SetInlineBytes(32768);
  InstrRef op = IssueOp(&RecordingKernel, 1, 0, 48);
  EXPECT_TRUE(op->done());
  const std::vector<KernelRun> r = TakeRuns();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].thread, std::this_thread::get_id());
}

TEST_F(InlineRunTest, OpAboveTheLimitGoesToTheWorker) {
  VmTesting::SetInlineBytes(1024);
  InstrRef op = IssueOp(&RecordingKernel, 1, 0, 4096);
  vm_.Wait(op.get());
  const std::vector<KernelRun> r = TakeRuns();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].thread, std::this_thread::get_id());
}

TEST_F(InlineRunTest, LimitZeroNeverRunsInline) {
  VmTesting::SetInlineBytes(0);
  for (size_t bytes : {size_t{0}, size_t{4}, size_t{48}}) {
    InstrRef op = IssueOp(&RecordingKernel, 1, 0, bytes);
    vm_.Wait(op.get());
  }
  for (const KernelRun& r : TakeRuns()) EXPECT_NE(r.thread, std::this_thread::get_id());
}

TEST_F(InlineRunTest, OpBehindQueuedWorkOnItsStreamWaitsItsTurnOnTheWorker) {
  VmTesting::SetInlineBytes(32768);
  Latch gate;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "inline_run_test_gate", {}, {}, [&] { gate.WaitFor(kGenerousTimeout); },
        CpuStream(StreamRole::kCompute));
  });
  InstrRef op = IssueOp(&RecordingKernel, 1, 0, 48);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(op->done()) << "ran before the instruction queued ahead of it";
  gate.Open();
  vm_.Wait(op.get());
  const std::vector<KernelRun> r = TakeRuns();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].thread, std::this_thread::get_id());
}

TEST_F(InlineRunTest, OpWhoseInputIsPendingOnAnotherStreamWaitsForIt) {
  VmTesting::SetInlineBytes(32768);
  Latch gate;
  BlobPtr input = MakeCpuBlob(48);
  // The input's writer sits on the aux stream; the compute stream is idle.
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "inline_run_test_writer", {}, {input}, [&] { gate.WaitFor(kGenerousTimeout); },
        CpuStream(StreamRole::kAux));
  });
  InstrRef op = IssueOp(&RecordingKernel, 1, 0, 48, {Output(input)});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(op->done()) << "ran before its input was written";
  gate.Open();
  vm_.Wait(op.get());
  const std::vector<KernelRun> r = TakeRuns();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].thread, std::this_thread::get_id());
}

TEST_F(InlineRunTest, AnErrorOfAnInlineRunWaitsForTheNextWaitAndTheVmKeepsWorking) {
  VmTesting::SetInlineBytes(32768);
  InstrRef bad = IssueOp(&ThrowingKernel, 1, 0, 48);  // returns: the error is kept
  EXPECT_TRUE(bad->done());
  ASSERT_NE(bad->error(), nullptr);
  try {
    vm_.Sync();
    FAIL() << "sync() did not re-throw the inline run's error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the kernel rejects value 7"), std::string::npos)
        << e.what();
  }
  InstrRef good = IssueOp(&RecordingKernel, 2, 0, 48);
  EXPECT_NO_THROW(vm_.Sync());
  EXPECT_EQ(TakeRuns().size(), 1u);
}

TEST_F(InlineRunTest, AnOpIssuedWhileAnotherThreadRunsOneInlineRunsAfterIt) {
  VmTesting::SetInlineBytes(32768);
  std::thread first([] { IssueOp(&RecordingKernel, 1, 200, 48); });  // holds the stream 200 ms
  ASSERT_TRUE(testing::WaitUntil([] { return running.load() > 0; }));
  // Issued from this thread while the stream is held: queued for the worker, which waits its turn.
  InstrRef second = IssueOp(&RecordingKernel, 2, 0, 48);
  EXPECT_FALSE(second->done());
  first.join();
  vm_.Wait(second.get());
  const std::vector<KernelRun> r = TakeRuns();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].tag, 1);
  EXPECT_EQ(r[1].tag, 2);
  EXPECT_NE(r[1].thread, std::this_thread::get_id()) << "ran inline although the stream was held";
}

TEST_F(InlineRunTest, SmallHostCopiesInAndOutRunOnTheIssuingThread) {
  VmTesting::SetInlineBytes(32768);
  Tensor t = ofl::tensor<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  // from_host finished before the call returned: nothing is in flight.
  EXPECT_EQ(vm_.in_flight(), 0);
  std::thread::id reader;
  std::vector<float> out;
  ofl::detail::ReadToHost(t.permute({1, 0}), "inline_run_test_read", [&](size_t nbytes) {
    reader = std::this_thread::get_id();
    out.resize(nbytes / sizeof(float));
    return static_cast<void*>(out.data());
  });
  EXPECT_EQ(reader, std::this_thread::get_id());
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // Over the limit, the read is handed to the worker.
  VmTesting::SetInlineBytes(8);
  ofl::detail::ReadToHost(t, "inline_run_test_read", [&](size_t nbytes) {
    reader = std::this_thread::get_id();
    out.resize(nbytes / sizeof(float));
    return static_cast<void*>(out.data());
  });
  EXPECT_NE(reader, std::this_thread::get_id());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(InlineRunTest, AnOpCallWithNoOperandIsRefusedNamingTheOp) {
  InstructionsBuilder builder;
  try {
    builder.OpCall("inline_run_test_nothing", &RecordingKernel, {}, {},
                   Attrs(RunAttrSchema(), 1, 0));
    FAIL() << "an op call with no operand was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "inline_run_test_nothing: an op call needs an operand to pick its stream"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(builder.instructions().empty());
  EXPECT_NO_THROW(vm_.Sync());
}

}  // namespace
}  // namespace ofl::vm
