// ofl::set_wait_hooks (oneflow_lite/wait_hooks.h): the hooks run in pairs on the waiting thread
// around the waits that may sleep (a read of a tensor still being computed, sync), never around
// calls that do not wait, and `after` runs also when the wait ends in an exception (a hang
// report); `interrupted` ends a sleeping wait early. Runs on the CPU: the blocked instruction is a
// CPU callback.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
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

using testing::Latch;
using testing::SubmitWithoutWaiting;
using testing::WaitUntil;

std::atomic<int> befores{0};
std::atomic<int> afters{0};
std::atomic<bool> unbalanced{false};
thread_local int depth = 0;

void Before() {
  if (depth++ != 0) unbalanced = true;
  ++befores;
}
void After() {
  if (--depth != 0) unbalanced = true;
  ++afters;
}

// Submits a CPU callback on x that holds its stream until `latch` opens; returns once it runs.
void Hold(const Tensor& x, const char* op, const std::shared_ptr<Latch>& latch, float value) {
  auto started = std::make_shared<std::atomic<bool>>(false);
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->AccessBlobByCallback(
        op, x.impl()->arg(),
        [latch, started, value](const kernels::TensorArg& t) {
          started->store(true);
          latch->WaitFor(testing::kGenerousTimeout);
          static_cast<float*>(t.data)[0] = value;
        },
        AccessModifier::kMut);
  });
  ASSERT_TRUE(WaitUntil([&] { return started->load(); }));
}

class WaitHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ofl::sync();
    befores = 0;
    afters = 0;
    unbalanced = false;
    ofl::set_wait_hooks({&Before, &After});
  }
  void TearDown() override {
    ofl::set_wait_hooks({});
    EXPECT_FALSE(unbalanced.load());
  }
};

TEST_F(WaitHooksTest, CallsThatDoNotWaitRunNoHook) {
  Tensor x = ofl::ones(Shape({4, 1, 3}), DType::kFloat32, Device("cpu"));
  for (int i = 0; i < 100; ++i) {
    Tensor y = x.expand({2, 4, 5, 3}).contiguous() + 1.0;
  }
  EXPECT_EQ(befores.load(), 0);
  EXPECT_EQ(afters.load(), 0);
}

TEST_F(WaitHooksTest, SyncAndAReadOfUnfinishedWorkRunOnePairEach) {
  const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
  auto latch = std::make_shared<Latch>();
  Hold(x, "held", latch, 5);
  std::thread opener([latch] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    latch->Open();
  });
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{5, 2}));  // waits for the callback
  opener.join();
  EXPECT_EQ(befores.load(), 1);
  EXPECT_EQ(afters.load(), 1);
  ofl::sync();
  EXPECT_EQ(befores.load(), 2);
  EXPECT_EQ(afters.load(), 2);
}

TEST_F(WaitHooksTest, AfterRunsWhenTheWaitThrowsAHangReport) {
  VirtualMachine& vm = VirtualMachine::Get();
  const double saved = vm.wait_timeout();
  VmTesting::SetWaitTimeout(0.3);
  const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
  auto latch = std::make_shared<Latch>();
  Hold(x, "held_for_hang", latch, 7);
  EXPECT_THROW(vm.Sync(), Error);
  EXPECT_EQ(befores.load(), 1);
  EXPECT_EQ(afters.load(), 1);
  latch->Open();
  VmTesting::SetWaitTimeout(saved);
  ofl::sync();
  EXPECT_EQ(befores.load(), afters.load());
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{7, 2}));
}

std::atomic<int> interrupt_asks{0};
std::atomic<bool> interrupt_now{false};
bool Interrupted() {
  ++interrupt_asks;
  return interrupt_now.load();
}

// `interrupted` ends a wait that would otherwise sleep until the held callback is released (the
// latch's generous timeout): the wait throws WaitInterrupted, `after` still runs, the held work
// goes on in the background, and the runtime keeps working.
TEST_F(WaitHooksTest, InterruptedEndsASleepingWaitAndTheWorkGoesOn) {
  interrupt_asks = 0;
  interrupt_now = true;
  ofl::set_wait_hooks({&Before, &After, &Interrupted});
  const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
  auto latch = std::make_shared<Latch>();
  Hold(x, "held_for_interrupt", latch, 9);
  EXPECT_THROW(ofl::sync(), WaitInterrupted);
  EXPECT_GE(interrupt_asks.load(), 1);
  EXPECT_EQ(befores.load(), 1);
  EXPECT_EQ(afters.load(), 1);
  interrupt_now = false;
  latch->Open();
  ofl::sync();  // no error is left behind: the held callback ran
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{9, 2}));
  const Tensor y = x + 1.0;
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{10, 3}));
}

// A read into the caller's memory queued behind held work: the interrupted wait drops the copy
// (the caller's vector is gone once the exception reaches it), which never runs, and reports no
// error at the next sync.
TEST_F(WaitHooksTest, AnInterruptedReadIntoTheCallersMemoryIsDropped) {
  interrupt_now = true;
  ofl::set_wait_hooks({&Before, &After, &Interrupted});
  const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
  auto latch = std::make_shared<Latch>();
  Hold(x, "held_before_read", latch, 4);
  {
    std::vector<float> out(2, -1);
    EXPECT_THROW(x.copy_to_host(out.data(), out.size() * sizeof(float)), WaitInterrupted);
    EXPECT_EQ(out, (std::vector<float>{-1, -1}));  // not written, and never will be
  }
  interrupt_now = false;
  latch->Open();
  ofl::sync();
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{4, 2}));
}

}  // namespace
}  // namespace ofl::vm
