// Tests the VM's back-pressure: a submitter blocks while the number of instructions in flight is
// at the high-water mark and resumes once they drain, so a fast issuer cannot queue without bound.
// The VM is a process singleton: every test restores the default marks (16384 / 8192). The test of
// public ops runs on VmTestDevice(); the others park CPU callbacks on the aux stream, which works
// the same whatever device the suite runs on.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::vm {
namespace {

using testing::CpuStream;
using testing::Latch;
using testing::ScopeGuard;
using testing::SubmitWithoutWaiting;
using testing::VmTestDevice;
using testing::WaitUntil;

constexpr int64_t kDefaultHigh = 16384;
constexpr int64_t kDefaultLow = 8192;

TEST(BackPressureTest, SubmitterBlocksAtTheHighWaterMarkUntilTheBacklogDrains) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.Sync();
  ScopeGuard restore([&vm] { vm.SetWaterMarks(kDefaultHigh, kDefaultLow); });
  constexpr int64_t kHigh = 64, kLow = 32;
  constexpr int kBatch = 4, kBatches = 250;
  vm.SetWaterMarks(kHigh, kLow);
  VmTesting::ResetPeakInFlight();

  // Everything the submitter queues sits behind this instruction until the gate opens.
  Latch gate;
  std::atomic<bool> head_started{false};
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "gate", {}, {},
        [&] {
          head_started.store(true);
          gate.WaitFor(testing::kGenerousTimeout);
        },
        CpuStream(StreamRole::kAux));
  });
  ASSERT_TRUE(WaitUntil([&] { return head_started.load(); }));

  std::atomic<int> submitted{0};
  std::atomic<int> ran{0};
  std::thread submitter([&] {
    for (int i = 0; i < kBatches; ++i) {
      SubmitWithoutWaiting([&](InstructionsBuilder* b) {
        for (int k = 0; k < kBatch; ++k) {
          b->Function(
              "queued", {}, {}, [&ran] { ran.fetch_add(1); }, CpuStream(StreamRole::kAux));
        }
      });
      submitted.fetch_add(kBatch);
    }
  });

  const bool reached_mark = WaitUntil([&] { return vm.in_flight() >= kHigh; });
  // Leave the submitter time to run past the mark if it does not block.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int64_t in_flight_while_blocked = vm.in_flight();
  const int submitted_while_blocked = submitted.load();
  const int ran_while_blocked = ran.load();
  gate.Open();
  submitter.join();
  vm.Sync();

  EXPECT_TRUE(reached_mark);
  EXPECT_LE(in_flight_while_blocked, kHigh + kBatch);
  EXPECT_LT(submitted_while_blocked, kBatch * kBatches) << "the submitter never blocked";
  EXPECT_EQ(ran_while_blocked, 0);
  EXPECT_LE(VmTesting::peak_in_flight(), kHigh + kBatch);
  EXPECT_EQ(submitted.load(), kBatch * kBatches);
  EXPECT_EQ(ran.load(), kBatch * kBatches);
  EXPECT_EQ(vm.in_flight(), 0);
}

TEST(BackPressureTest, OpsIssuedUnderLowMarksStayBoundedAndCorrect) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.Sync();
  ScopeGuard restore([&vm] { vm.SetWaterMarks(kDefaultHigh, kDefaultLow); });
  constexpr int64_t kHigh = 48, kLow = 16;
  vm.SetWaterMarks(kHigh, kLow);
  VmTesting::ResetPeakInFlight();

  Tensor x = tensor<float>({1, 2, 3}, Shape({3, 1}), VmTestDevice());
  std::vector<Tensor> keep;
  for (int i = 0; i < 400; ++i) {
    // Each step reads the previous one: a chain of copies plus the releases of dead tensors.
    x = x.expand({3, 2}).contiguous().narrow(1, i % 2, 1).contiguous();
    if (i % 50 == 0) keep.push_back(x.repeat({1, 2}));
  }
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  for (const Tensor& k : keep)
    EXPECT_EQ(k.to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  vm.Sync();
  // Sync submits one barrier per stream in one batch: the largest batch here.
  const int64_t largest_batch = static_cast<int64_t>(vm.devices().streams().size());
  EXPECT_LE(VmTesting::peak_in_flight(), kHigh + largest_batch);
}

TEST(BackPressureTest, WaterMarksCanBeChangedWhileAnotherThreadSubmits) {
  // The marks are read by every submitter; changing them at run time must be safe (a data race
  // here shows up under ThreadSanitizer).
  VirtualMachine& vm = VirtualMachine::Get();
  vm.Sync();
  ScopeGuard restore([&vm] { vm.SetWaterMarks(kDefaultHigh, kDefaultLow); });
  std::atomic<bool> stop{false};
  std::atomic<int> ran{0};
  int submitted = 0;
  std::thread submitter([&] {
    while (!stop.load()) {
      SubmitWithoutWaiting([&](InstructionsBuilder* b) {
        b->Function(
            "tick", {}, {}, [&ran] { ran.fetch_add(1); }, CpuStream(StreamRole::kAux));
      });
      ++submitted;
    }
  });
  for (int i = 0; i < 50; ++i) {
    vm.SetWaterMarks(8 + i % 4, 4);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  vm.SetWaterMarks(kDefaultHigh, kDefaultLow);
  stop.store(true);
  submitter.join();
  vm.Sync();
  EXPECT_EQ(ran.load(), submitted);
}

TEST(BackPressureTest, SubmitterBlockedBehindAStuckInstructionGetsAHangReport) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.Sync();
  const double saved_timeout = vm.wait_timeout();
  ScopeGuard restore([&vm, saved_timeout] {
    vm.SetWaterMarks(kDefaultHigh, kDefaultLow);
    VmTesting::SetWaitTimeout(saved_timeout);
  });
  vm.SetWaterMarks(4, 2);
  VmTesting::SetWaitTimeout(0.3);
  Latch gate;
  std::atomic<bool> head_started{false};
  InstrRef stuck;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    stuck = b->Function(
        "stuck_head", {}, {},
        [&] {
          head_started.store(true);
          gate.WaitFor(testing::kGenerousTimeout);
        },
        CpuStream(StreamRole::kAux));
  });
  ASSERT_TRUE(WaitUntil([&] { return head_started.load(); }));
  std::atomic<int> ran{0};
  int accepted = 0;
  std::string report;
  for (int i = 0; i < 8 && report.empty(); ++i) {
    try {
      SubmitWithoutWaiting([&](InstructionsBuilder* b) {
        b->Function(
            "behind_stuck", {}, {}, [&ran] { ran.fetch_add(1); }, CpuStream(StreamRole::kAux));
      });
      ++accepted;
    } catch (const Error& e) {
      report = e.what();
    }
  }
  gate.Open();
  EXPECT_NO_THROW(vm.Sync());
  EXPECT_NE(report.find("VM hang"), std::string::npos) << report;
  EXPECT_NE(report.find("back-pressure"), std::string::npos) << report;
  EXPECT_NE(report.find("high-water mark 4"), std::string::npos) << report;
  EXPECT_NE(report.find("#" + std::to_string(stuck->id()) + " Function stuck_head on " +
                        CpuStream(StreamRole::kAux)->name() + ": at the head of its stream"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("OFL_VM_TIMEOUT_SECONDS"), std::string::npos) << report;
  EXPECT_LE(accepted, 4) << "submissions went on past the high-water mark";
  EXPECT_EQ(ran.load(), accepted)
      << "the refused submission ran anyway, or an accepted one was lost";
}

TEST(BackPressureTest, InvalidWaterMarksAreRejectedWithTheValues) {
  VirtualMachine& vm = VirtualMachine::Get();
  ScopeGuard restore([&vm] { vm.SetWaterMarks(kDefaultHigh, kDefaultLow); });
  const std::vector<std::pair<int64_t, int64_t>> bad = {{32, 64}, {64, 64}, {64, 0}, {0, -1}};
  for (const auto& [high, low] : bad) {
    try {
      vm.SetWaterMarks(high, low);
      ADD_FAILURE() << "accepted high=" << high << " low=" << low;
    } catch (const InvalidArgument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("water"), std::string::npos) << msg;
      EXPECT_NE(msg.find("high=" + std::to_string(high)), std::string::npos) << msg;
      EXPECT_NE(msg.find("low=" + std::to_string(low)), std::string::npos) << msg;
    }
  }
  // Beyond what a stream's ring can hold.
  EXPECT_THROW(vm.SetWaterMarks(int64_t{1} << 40, 8), InvalidArgument);
}

}  // namespace
}  // namespace ofl::vm
