// Tests that a wait which gives up (hang report) never returns to its caller while a callback that
// copies into or out of the caller's memory can still run: copy_to_host's destination, from_host's
// source. A started copy is waited for to its end; one that has not started is abandoned and never
// runs; to_vector reads into memory the read itself owns. Run under ASan, a violation is a
// heap-use-after-free report. Runs on the CPU whatever OFL_TEST_DEVICE says: the copies under test
// are callbacks that touch the tensor's bytes and the caller's memory on a CPU worker (a device the
// host cannot read stages its reads and writes through d2h / h2d copies instead).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
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
using testing::Latch;
using testing::ScopeGuard;
using testing::SubmitWithoutWaiting;
using testing::WaitUntil;

class CallerMemoryWaitTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = VirtualMachine::Get().wait_timeout(); }
  void TearDown() override { VmTesting::SetWaitTimeout(saved_); }

 private:
  double saved_ = 0;
};

TEST_F(CallerMemoryWaitTest, StartedCopyOfCallerMemoryIsWaitedForToItsEnd) {
  VirtualMachine& vm = VirtualMachine::Get();
  const Tensor x = tensor<float>({1, 2, 3, 4}, Shape({4}), Device("cpu"));
  sync();
  VmTesting::SetWaitTimeout(0.2);
  auto started = std::make_shared<std::atomic<bool>>(false);
  auto finished = std::make_shared<std::atomic<bool>>(false);
  auto latch = std::make_shared<Latch>();
  InstrRef copy;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    copy = b->AccessBlobByCallback(
        "slow_caller_copy", x.impl()->arg(),
        [started, finished, latch](const kernels::TensorArg&) {
          started->store(true);
          // A copy slower than the hang timeout (the latch opens after several timeouts).
          latch->WaitFor(testing::kGenerousTimeout);
          finished->store(true);
        },
        AccessModifier::kConst, /*stream=*/nullptr, /*caller_memory=*/true);
  });
  ASSERT_TRUE(WaitUntil([&] { return started->load(); }));
  std::thread opener([latch] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    latch->Open();
  });
  EXPECT_NO_THROW(vm.Wait(copy.get())) << "gave up while the copy into the caller's memory ran";
  EXPECT_TRUE(finished->load()) << "Wait returned before the callback finished";
  opener.join();
  EXPECT_NO_THROW(vm.ThrowIfFailed(copy.get()));
}

TEST_F(CallerMemoryWaitTest, StartedCallbackOnVmMemoryStillReportsTheHang) {
  // Without caller memory the report is thrown at once, as before: the callback may go on.
  VirtualMachine& vm = VirtualMachine::Get();
  const Tensor x = tensor<float>({1}, Shape({1}), Device("cpu"));
  sync();
  VmTesting::SetWaitTimeout(0.2);
  auto started = std::make_shared<std::atomic<bool>>(false);
  auto latch = std::make_shared<Latch>();
  InstrRef blocked;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    blocked = b->AccessBlobByCallback(
        "blocked_vm_callback", x.impl()->arg(),
        [started, latch](const kernels::TensorArg&) {
          started->store(true);
          latch->WaitFor(testing::kGenerousTimeout);
        },
        AccessModifier::kConst);
  });
  ASSERT_TRUE(WaitUntil([&] { return started->load(); }));
  std::string report;
  try {
    vm.Wait(blocked.get());
  } catch (const Error& e) {
    report = e.what();
  }
  EXPECT_TRUE(Contains(report, "is running and may still finish later")) << report;
  latch->Open();
  EXPECT_NO_THROW(vm.Sync());
}

// A large read or write with a hang timeout far below the copy's time: each call either returns
// the right data or throws a hang report (copy_to_host and from_host: one whose copy will not
// run); the caller's buffer is freed
// right after, so a copy still running into it is a use-after-free (ASan) or corrupts the heap.
TEST_F(CallerMemoryWaitTest, LargeCopiesWithATinyTimeoutNeverOutliveTheCallersBuffer) {
  VirtualMachine& vm = VirtualMachine::Get();
  constexpr int64_t kNumel = int64_t{8} << 20;  // 32 MiB of float32: copies of several ms
  std::vector<float> source(static_cast<size_t>(kNumel));
  for (int64_t i = 0; i < kNumel; ++i) source[static_cast<size_t>(i)] = static_cast<float>(i % 977);
  const Tensor x = from_host(source.data(), Shape({kNumel}), DType::kFloat32, Device("cpu"));
  sync();
  VmTesting::SetWaitTimeout(0.001);
  int completed = 0, abandoned = 0;
  // caller_memory: the call copies into or out of memory its caller owns, so it may only give up
  // on a copy that has not started (and then never runs); to_vector reads into memory its own
  // callback owns and may also give up on a running copy.
  auto check = [&](const std::function<void()>& call, bool caller_memory) {
    try {
      call();
      ++completed;
    } catch (const Error& e) {
      if (caller_memory) {
        EXPECT_TRUE(Contains(e.what(), "will not run")) << e.what();
      } else {
        EXPECT_TRUE(Contains(e.what(), "will not run") ||
                    Contains(e.what(), "may still finish later"))
            << e.what();
      }
      ++abandoned;
    }
  };
  for (int round = 0; round < 3; ++round) {
    check(
        [&] {
          std::vector<float> out(static_cast<size_t>(kNumel));
          x.copy_to_host(out.data(), out.size() * sizeof(float));
          EXPECT_EQ(out[12345], static_cast<float>(12345 % 977));
          EXPECT_EQ(out.back(), source.back());
        },
        /*caller_memory=*/true);
    check(
        [&] {
          const std::vector<float> out = x.to_vector<float>();
          EXPECT_EQ(out[54321], static_cast<float>(54321 % 977));
        },
        /*caller_memory=*/false);
    check(
        [&] {
          auto src = std::make_unique<std::vector<float>>(source);
          const Tensor y = from_host(src->data(), Shape({kNumel}), DType::kFloat32, Device("cpu"));
          src.reset();  // from_host returned: its source may be freed
          VmTesting::SetWaitTimeout(0);
          const std::vector<float> back = y.narrow(0, kNumel - 3, 3).to_vector<float>();
          VmTesting::SetWaitTimeout(0.001);
          EXPECT_EQ(back, (std::vector<float>(source.end() - 3, source.end())));
        },
        /*caller_memory=*/true);
  }
  VmTesting::SetWaitTimeout(0);
  EXPECT_NO_THROW(vm.Sync());
  EXPECT_EQ(completed + abandoned, 9);
  EXPECT_EQ(x.narrow(0, 100, 2).to_vector<float>(), (std::vector<float>{100, 101}));
}

}  // namespace
}  // namespace ofl::vm
