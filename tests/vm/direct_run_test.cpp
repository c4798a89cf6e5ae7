// Direct runs (vm/THREADING.md, "Direct runs"): a small op call of a built-in kernel, on an idle
// CPU stream, whose operands no unfinished instruction touches, runs at the call with no
// instruction. Everything else is issued as before, and the results and errors are the same.
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "tests/vm/vm_test_util.h"
#include "vm/vm_testing.h"

namespace ofl::vm {
namespace {

using testing::Contains;
using testing::CpuStream;
using testing::kGenerousTimeout;
using testing::Latch;
using testing::ScopeGuard;
using testing::SubmitWithoutWaiting;

const std::vector<float> kExpanded = {1, 2, 3, 1, 2, 3};  // (3) expanded to (2,3)

class DirectRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (vm_.sync_mode() || vm_.inline_bytes() <= 0) {
      GTEST_SKIP() << "direct runs are off (OFL_VM_INLINE_BYTES=0) or not counted (OFL_VM_SYNC)";
    }
    SyncAndSettle();
  }
  // A wait returns once the work is done, a moment before the worker marks its stream idle; a
  // direct run needs the idle stream, so the tests that expect one wait for that too.
  void Settle() {
    ASSERT_TRUE(testing::WaitUntil([] { return CpuStream(StreamRole::kCompute)->idle(); }))
        << "the CPU compute stream did not go idle";
  }
  void SyncAndSettle() {
    vm_.Sync();
    Settle();
  }
  // y = x.expand({2, 3}).contiguous(), returning how many direct runs it made.
  int64_t ExpandContiguous(const Tensor& x, Tensor* y) {
    const int64_t before = VmTesting::direct_runs();
    *y = x.expand({2, 3}).contiguous();
    return VmTesting::direct_runs() - before;
  }
  VirtualMachine& vm_ = VirtualMachine::Get();
  ScopeGuard restore_{[limit = VirtualMachine::Get().inline_bytes()] {
    VmTesting::SetInlineBytes(limit);
    VirtualMachine::Get().SetTracing(false);
  }};
};

TEST_F(DirectRunTest, SmallCopyAndRepeatOnAnIdleCpuStreamRunAtTheCall) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  SyncAndSettle();
  Tensor y;
  EXPECT_EQ(ExpandContiguous(x, &y), 1);
  EXPECT_EQ(vm_.in_flight(), 0);
  EXPECT_EQ(y.to_vector<float>(), kExpanded);
  const int64_t before = VmTesting::direct_runs();
  const Tensor r = x.repeat({2});
  EXPECT_EQ(VmTesting::direct_runs(), before + 1);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  // A chain of them: each input was written by the direct run before it.
  Tensor z = x;
  for (int i = 0; i < 5; ++i) z = z.expand({2, 3}).contiguous().narrow(0, 1, 1).reshape({3});
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST_F(DirectRunTest, TracingOverTheLimitAndALimitOfZeroIssueInstructions) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  vm_.Sync();
  Tensor y;
  vm_.SetTracing(true);  // the trace wants the instruction
  EXPECT_EQ(ExpandContiguous(x, &y), 0);
  EXPECT_EQ(y.to_vector<float>(), kExpanded);
  vm_.SetTracing(false);
  vm_.TakeTrace();
  vm_.TakePoolEvents();
  VmTesting::SetInlineBytes(16);  // 12 bytes in, 24 out
  EXPECT_EQ(ExpandContiguous(x, &y), 0);
  EXPECT_EQ(y.to_vector<float>(), kExpanded);
  VmTesting::SetInlineBytes(0);
  EXPECT_EQ(ExpandContiguous(x, &y), 0);
  EXPECT_EQ(y.to_vector<float>(), kExpanded);
}

// Work queued on the stream, or an input still being written on another stream: the op is issued
// and runs after it, reading what it wrote.
TEST_F(DirectRunTest, BusyStreamOrUnfinishedWriterIssuesAnInstructionThatRunsAfterIt) {
  for (StreamRole role : {StreamRole::kCompute, StreamRole::kAux}) {
    SCOPED_TRACE(to_string(role));
    const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
    vm_.Sync();
    Latch gate;
    const BlobPtr blob = x.impl()->blob();
    SubmitWithoutWaiting([&](InstructionsBuilder* b) {
      b->Function(
          "direct_run_test_writer", {}, {blob},
          [&gate, blob] {
            gate.WaitFor(kGenerousTimeout);
            reinterpret_cast<float*>(blob->data())[0] = 7;
          },
          CpuStream(role));
    });
    Tensor y;
    EXPECT_EQ(ExpandContiguous(x, &y), 0);
    gate.Open();
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{7, 2, 3, 7, 2, 3}));
  }
}

// A poisoned input is passed on by the instruction path: the output carries the producer's error.
TEST_F(DirectRunTest, PoisonedInputPassesItsErrorOnThroughAnInstruction) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  vm_.Sync();
  const BlobPtr blob = x.impl()->blob();
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "direct_run_test_failing_writer", {}, {blob},
        [] { throw std::runtime_error("direct_run_test: writer failed on purpose"); },
        CpuStream(StreamRole::kCompute));
  });
  EXPECT_TRUE(testing::WaitUntil([&] { return blob->error() != nullptr; }));
  Tensor y;
  EXPECT_EQ(ExpandContiguous(x, &y), 0);
  try {
    y.to_vector<float>();
    ADD_FAILURE() << "reading a tensor computed from a poisoned input did not throw";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "writer failed on purpose")) << e.what();
  }
  try {
    vm_.Sync();
  } catch (const Error&) {
  }
  // The runtime keeps working, directly again.
  const Tensor ok = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  SyncAndSettle();
  EXPECT_EQ(ExpandContiguous(ok, &y), 1);
  EXPECT_EQ(y.to_vector<float>(), kExpanded);
}

// A built-in kernel that throws at the call is run again as an instruction, which reports the
// error the usual way: kept for the next wait, naming the op and the values.
TEST_F(DirectRunTest, BuiltInKernelErrorIsReportedByTheInstructionItFallsBackTo) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  const Tensor out = ofl::empty(Shape({2}));
  SyncAndSettle();
  const kernels::KernelFn copy = kernels::FindKernel("copy", DeviceType::kCPU);
  ASSERT_TRUE(kernels::IsBuiltinKernel(copy));
  const int64_t before = VmTesting::direct_runs();
  PhysicalRun([&](InstructionsBuilder* b) {
    b->OpCall("copy", copy, {x.impl()->arg()}, {out.impl()->arg()});
  });
  EXPECT_EQ(VmTesting::direct_runs(), before);
  try {
    vm_.Sync();
    ADD_FAILURE() << "a copy between shapes (3) and (2) did not fail";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "copy")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(3)")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(2)")) << e.what();
  }
  Settle();
  Tensor y;
  EXPECT_EQ(ExpandContiguous(x, &y), 1);
  EXPECT_EQ(y.to_vector<float>(), kExpanded);
}

// A tensor that no instruction ever recorded (made by empty at the call, or by a direct run) gives
// its block back the moment it dies, with nothing to wait for.
TEST_F(DirectRunTest, ATensorNoInstructionRecordedFreesItsBlockWhenItDies) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  SyncAndSettle();
  const int64_t base = memory_stats(Device("cpu")).allocated_bytes;
  {
    Tensor e = ofl::empty(Shape({4, 3}));
    EXPECT_FALSE(e.impl()->blob()->issued());
    Tensor y;
    EXPECT_EQ(ExpandContiguous(x, &y), 1);
    EXPECT_FALSE(y.impl()->blob()->issued());
    EXPECT_EQ(memory_stats(Device("cpu")).allocated_bytes, base + 64 + 64);
  }
  EXPECT_EQ(memory_stats(Device("cpu")).allocated_bytes, base);
  EXPECT_EQ(vm_.in_flight(), 0);
  // Read by an instruction, it takes the general path, and is still freed.
  {
    Tensor y;
    ExpandContiguous(x, &y);
    EXPECT_EQ(y.to_vector<float>(), kExpanded);  // a direct read records nothing either
    EXPECT_FALSE(y.impl()->blob()->issued());
    const BlobPtr blob = y.impl()->blob();
    SubmitWithoutWaiting([&](InstructionsBuilder* b) {
      b->Function(
          "direct_run_test_reader", {blob}, {}, [] {}, CpuStream(StreamRole::kCompute));
    });
    EXPECT_TRUE(y.impl()->blob()->issued());
  }
  vm_.Sync();
  EXPECT_EQ(memory_stats(Device("cpu")).allocated_bytes, base);
}

// A program's own kernel never runs while the VM holds its submit lock.
TEST_F(DirectRunTest, AProgramsOwnKernelIsNeverRunDirectly) {
  kernels::KernelFn mine = [](const KernelContext& ctx) {
    kernels::FindKernel("copy", DeviceType::kCPU)(ctx);
  };
  EXPECT_FALSE(kernels::IsBuiltinKernel(mine));
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  const Tensor out = ofl::empty(Shape({3}));
  SyncAndSettle();
  const int64_t before = VmTesting::direct_runs();
  PhysicalRun([&](InstructionsBuilder* b) {
    b->OpCall("my_copy", mine, {x.impl()->arg()}, {out.impl()->arg()});
  });
  EXPECT_EQ(VmTesting::direct_runs(), before);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace ofl::vm
