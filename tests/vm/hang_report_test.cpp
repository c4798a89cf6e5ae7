// Tests the hang report: a wait (to_vector, sync, Wait) that sees no instruction complete anywhere
// for the wait timeout throws ofl::Error listing the pending instructions (id, policy, op, stream)
// and what each waits for; the instruction waited for is abandoned when it provably has not
// started; the VM keeps working once the blocked instruction finishes; waits that keep making
// progress never report. Runs on the CPU whatever OFL_TEST_DEVICE says: the blocked instructions
// are CPU callbacks that write the tensor's bytes, and the reports name CPU streams.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::vm {
namespace {

using testing::Contains;
using testing::CpuStream;
using testing::Latch;
using testing::MakeCpuBlob;
using testing::SubmitWithoutWaiting;
using testing::WaitUntil;

std::string Id(const InstrRef& i) { return "#" + std::to_string(i->id()); }

// Lowers the hang timeout to one second for the test, and restores it after.
class HangReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VirtualMachine& vm = VirtualMachine::Get();
    saved_ = vm.wait_timeout();
    VmTesting::SetWaitTimeout(1.0);
  }
  void TearDown() override { VmTesting::SetWaitTimeout(saved_); }

  double initial_timeout() const { return saved_; }

  // Submits an instruction that writes `arg`'s blob and blocks on `latch`; returns once it runs.
  InstrRef BlockOn(const std::shared_ptr<Latch>& latch, const std::string& op, BlobArg arg,
                   std::vector<float> fill = {}) {
    auto started = std::make_shared<std::atomic<bool>>(false);
    InstrRef blocked;
    SubmitWithoutWaiting([&](InstructionsBuilder* b) {
      blocked = b->AccessBlobByCallback(
          op, std::move(arg),
          [latch, started, fill](const kernels::TensorArg& t) {
            started->store(true);
            latch->WaitFor(testing::kGenerousTimeout);
            for (size_t i = 0; i < fill.size(); ++i) static_cast<float*>(t.data)[i] = fill[i];
          },
          AccessModifier::kMut);
    });
    EXPECT_TRUE(WaitUntil([&] { return started->load(); }));
    return blocked;
  }

 private:
  double saved_ = 0;
};

TEST_F(HangReportTest, TimeoutComesFromTheEnvironmentOrDefaultsTo300Seconds) {
  VirtualMachine& vm = VirtualMachine::Get();
  if (std::getenv("OFL_VM_TIMEOUT_SECONDS") == nullptr) {
    EXPECT_DOUBLE_EQ(initial_timeout(), 300.0);
  }
  VmTesting::SetWaitTimeout(2.5);
  EXPECT_DOUBLE_EQ(vm.wait_timeout(), 2.5);
  VmTesting::SetWaitTimeout(0);
  EXPECT_DOUBLE_EQ(vm.wait_timeout(), 0.0) << "<= 0 means wait forever";
  VmTesting::SetWaitTimeout(-5);
  EXPECT_DOUBLE_EQ(vm.wait_timeout(), 0.0);
}

TEST_F(HangReportTest, ToVectorBehindABlockedWriterThrowsAReportNamingIt) {
  VirtualMachine& vm = VirtualMachine::Get();
  const Tensor x = tensor<float>({1, 2, 3}, Shape({3}), Device("cpu"));
  auto latch = std::make_shared<Latch>();
  const InstrRef blocked = BlockOn(latch, "blocked_fill", x.impl()->arg(), {7, 8, 9});
  const std::string stream = CpuStream(StreamRole::kCompute)->name();
  std::string report;
  try {
    x.to_vector<float>();
    ADD_FAILURE() << "to_vector returned although its producer is blocked";
  } catch (const InvalidArgument& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  } catch (const Error& e) {
    report = e.what();
  }
  EXPECT_TRUE(Contains(report, "no instruction completed")) << report;
  // The waited-for instruction, and the blocked one with its id, policy, op and stream.
  EXPECT_TRUE(Contains(report, "to_vector")) << report;
  EXPECT_TRUE(Contains(report, Id(blocked) + " AccessBlobByCallback blocked_fill on " + stream))
      << report;
  EXPECT_TRUE(Contains(report, "at the head of its stream, running")) << report;
  EXPECT_TRUE(Contains(report, "queued behind " + Id(blocked) + " (blocked_fill)")) << report;
  EXPECT_TRUE(Contains(report, "will not run")) << report;

  // The VM is still usable: once the writer finishes, sync works and x holds what it wrote.
  latch->Open();
  EXPECT_NO_THROW(vm.Sync());
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(tensor<float>({4, 5}, Shape({2}), Device("cpu")).repeat({2}).to_vector<float>(),
            (std::vector<float>{4, 5, 4, 5}));
}

TEST_F(HangReportTest, CrossStreamWaiterIsListedWithWhatItWaitsForAndIsNotRunAfterwards) {
  VirtualMachine& vm = VirtualMachine::Get();
  VmTesting::SetWaitTimeout(0.5);
  BlobPtr blob = MakeCpuBlob(16);
  BlobArg arg;
  arg.blob = blob;
  arg.shape = Shape({4});
  arg.stride = Shape({1});
  auto latch = std::make_shared<Latch>();
  const InstrRef blocked = BlockOn(latch, "blocked_writer", arg);
  ASSERT_EQ(blocked->stream(), CpuStream(StreamRole::kCompute)) << "the blob's producer stream";
  auto ran = std::make_shared<std::atomic<bool>>(false);
  InstrRef reader;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    reader = b->Function(
        "reader_on_h2d", {blob}, {}, [ran] { ran->store(true); },
        CpuStream(StreamRole::kHost2Device));
  });
  std::string report;
  try {
    vm.Wait(reader.get());
    ADD_FAILURE() << "Wait returned although the reader's predecessor is blocked";
  } catch (const Error& e) {
    report = e.what();
  }
  const std::string compute = CpuStream(StreamRole::kCompute)->name();
  const std::string h2d = CpuStream(StreamRole::kHost2Device)->name();
  EXPECT_TRUE(Contains(report, Id(reader) + " Function reader_on_h2d on " + h2d + " [waited for]"))
      << report;
  EXPECT_TRUE(
      Contains(report, "waiting for " + Id(blocked) + " (blocked_writer on " + compute + ")"))
      << report;
  EXPECT_TRUE(Contains(report, Id(blocked) + " AccessBlobByCallback blocked_writer on " + compute))
      << report;

  latch->Open();
  EXPECT_NO_THROW(vm.Sync()) << "the abandoned reader's error was already reported";
  EXPECT_TRUE(reader->done());
  EXPECT_FALSE(ran->load()) << "an abandoned instruction ran after its waiter gave up";
  ASSERT_NE(reader->error(), nullptr);
  EXPECT_TRUE(Contains(reader->error()->message, "was not run")) << reader->error()->message;
}

TEST_F(HangReportTest, SyncReportsTheBlockedInstructionAndWorksAfterwards) {
  VirtualMachine& vm = VirtualMachine::Get();
  VmTesting::SetWaitTimeout(0.5);
  const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
  auto latch = std::make_shared<Latch>();
  const InstrRef blocked = BlockOn(latch, "blocked_for_sync", x.impl()->arg(), {3, 4});
  try {
    vm.Sync();
    ADD_FAILURE() << "sync returned although an instruction is blocked";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), Id(blocked) + " AccessBlobByCallback blocked_for_sync on " +
                                       CpuStream(StreamRole::kCompute)->name()))
        << e.what();
    EXPECT_TRUE(Contains(e.what(), "barrier")) << e.what();
  }
  latch->Open();
  EXPECT_NO_THROW(sync());
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{3, 4}));
}

TEST_F(HangReportTest, SlowWorkThatKeepsCompletingIsNotAHang) {
  // Five steps of 100 ms each outlast a 0.4 s timeout, but every window sees one complete.
  VirtualMachine& vm = VirtualMachine::Get();
  VmTesting::SetWaitTimeout(0.4);
  InstrRef last;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    for (int i = 0; i < 5; ++i) {
      last = b->Function(
          "slow_step", {}, {}, [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); },
          CpuStream(StreamRole::kAux));
    }
  });
  EXPECT_NO_THROW(vm.Wait(last.get()));
  EXPECT_TRUE(last->done());
  EXPECT_EQ(last->error(), nullptr);
}

TEST_F(HangReportTest, ZeroTimeoutNeverReports) {
  VirtualMachine& vm = VirtualMachine::Get();
  VmTesting::SetWaitTimeout(0);
  const Tensor x = tensor<float>({1}, Shape({1}), Device("cpu"));
  auto latch = std::make_shared<Latch>();
  BlockOn(latch, "blocked_briefly", x.impl()->arg(), {2});
  std::thread opener([latch] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    latch->Open();
  });
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2}));
  opener.join();
}

}  // namespace
}  // namespace ofl::vm
