// Tests calls into the runtime from inside a callback or kernel running on a VM worker: a wait that
// could only end after the running instruction (sync(), a blocking read queued behind it, work that
// depends on it) throws ofl::Error naming the call and the worker's stream instead of deadlocking;
// waits that can end are allowed; issuing work from a worker never blocks on back-pressure. Runs on
// the CPU whatever OFL_TEST_DEVICE says: which wait would deadlock depends on the tensors' producer
// streams being the CPU streams the callbacks run on, and the messages name those streams.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
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
using testing::ScopeGuard;
using testing::SubmitWithoutWaiting;
using testing::WaitUntil;

// Runs fn inside a Function instruction on `role`'s stream and returns what it threw ("" if
// nothing). A broken VM deadlocks inside fn: the short hang timeout then turns that into a report,
// which fails the caller's expectations instead of hanging the suite.
std::string ThrownInsideCallback(StreamRole role, std::function<void()> fn) {
  VirtualMachine& vm = VirtualMachine::Get();
  const double saved = vm.wait_timeout();
  ScopeGuard restore([saved] { VmTesting::SetWaitTimeout(saved); });
  VmTesting::SetWaitTimeout(2.0);
  auto thrown = std::make_shared<std::string>();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "reentrant_callback", {}, {},
        [fn, thrown, finished] {
          try {
            fn();
          } catch (const std::exception& e) {
            *thrown = e.what();
          }
          finished->store(true);
        },
        CpuStream(role));
  });
  EXPECT_TRUE(WaitUntil([&] { return finished->load(); })) << "the callback never finished";
  vm.Sync();
  return *thrown;
}

TEST(ReentrantCallTest, SyncInsideACallbackThrowsNamingTheStream) {
  const std::string stream = CpuStream(StreamRole::kCompute)->name();
  const std::string msg = ThrownInsideCallback(StreamRole::kCompute, [] { ofl::sync(); });
  EXPECT_TRUE(Contains(msg, "sync: cannot wait from inside a callback running on " + stream))
      << msg;
  EXPECT_TRUE(Contains(msg, "reentrant_callback")) << msg;
  // The runtime keeps working.
  EXPECT_EQ(tensor<float>({1, 2}, Shape({2}), Device("cpu")).repeat({2}).to_vector<float>(),
            (std::vector<float>{1, 2, 1, 2}));
}

TEST(ReentrantCallTest, BlockingReadQueuedBehindTheCallbackThrows) {
  const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
  sync();
  const std::string stream = CpuStream(StreamRole::kCompute)->name();
  // x's producer stream is compute: the repeat and the read queue behind the running callback.
  const std::string msg = ThrownInsideCallback(StreamRole::kCompute, [x] {
    const Tensor y = x.repeat({2});
    y.to_vector<float>();
  });
  EXPECT_TRUE(Contains(msg, "to_vector: cannot wait from inside a callback running on " + stream))
      << msg;
  EXPECT_TRUE(Contains(msg, "is queued behind it")) << msg;
  std::vector<float> into(2);
  const std::string copy_msg =
      ThrownInsideCallback(StreamRole::kCompute, [x, &into] { x.copy_to_host(into.data(), 8); });
  EXPECT_TRUE(
      Contains(copy_msg, "copy_to_host: cannot wait from inside a callback running on " + stream))
      << copy_msg;
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(ReentrantCallTest, ReadThatDependsOnTheCallbacksStreamFromAnotherStreamThrows) {
  // The callback runs on aux; the data it reads is produced on compute by an op that itself waits
  // for a write issued on aux after the callback: that chain can only finish after the callback.
  const Tensor x = tensor<float>({3, 4}, Shape({2}), Device("cpu"));
  sync();
  const std::string aux = CpuStream(StreamRole::kAux)->name();
  const std::string msg = ThrownInsideCallback(StreamRole::kAux, [x] {
    // Issued on aux behind the callback: a write of x's blob.
    PhysicalRun([&](InstructionsBuilder* b) {
      b->Function(
          "aux_write", {}, {x.impl()->blob()}, [] {}, CpuStream(StreamRole::kAux));
    });
    // The read goes to compute and waits for that write.
    x.to_vector<float>();
  });
  EXPECT_TRUE(Contains(msg, "to_vector: cannot wait from inside a callback running on " + aux))
      << msg;
  EXPECT_TRUE(Contains(msg, "waits for work queued behind it")) << msg;
}

TEST(ReentrantCallTest, ReadOfFinishedWorkOnAnotherStreamIsAllowed) {
  const Tensor x = tensor<float>({5, 6}, Shape({2}), Device("cpu"));
  const Tensor y = x.repeat({2});
  sync();
  std::vector<float> seen;
  const std::string msg =
      ThrownInsideCallback(StreamRole::kAux, [y, &seen] { seen = y.to_vector<float>(); });
  EXPECT_EQ(msg, "");
  EXPECT_EQ(seen, (std::vector<float>{5, 6, 5, 6}));
}

TEST(ReentrantCallTest, IssuingFromACallbackNeverBlocksOnBackPressure) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.Sync();
  ScopeGuard restore([&vm] { vm.SetWaterMarks(16384, 8192); });
  vm.SetWaterMarks(4, 2);
  auto ran = std::make_shared<std::atomic<int>>(0);
  constexpr int kIssued = 20;
  // Every op the callback issues queues behind the callback on its own stream: blocking until the
  // backlog drains would wait for itself.
  const std::string msg = ThrownInsideCallback(StreamRole::kAux, [ran] {
    for (int i = 0; i < kIssued; ++i) {
      PhysicalRun([&](InstructionsBuilder* b) {
        b->Function(
            "issued_from_callback", {}, {}, [ran] { ran->fetch_add(1); },
            CpuStream(StreamRole::kAux));
      });
    }
  });
  EXPECT_EQ(msg, "");
  vm.Sync();
  EXPECT_EQ(ran->load(), kIssued);
}

}  // namespace
}  // namespace ofl::vm
