// Direct reads (vm/THREADING.md, "Direct reads"): to_vector / copy_to_host of a small tensor whose
// producer finished, on the CPU, copy on the calling thread with no instruction. Everything else
// (an unfinished writer, an error, tracing, a large tensor, a device the host cannot touch) is
// read through an instruction as before, with the same values and errors.
#include <stdexcept>
#include <thread>
#include <vector>

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

class DirectReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (vm_.sync_mode() || vm_.inline_bytes() <= 0) {
      GTEST_SKIP() << "direct reads are off (OFL_VM_INLINE_BYTES=0) or not counted (OFL_VM_SYNC)";
    }
    vm_.Sync();
  }
  // The values read back and how many reads were direct.
  std::vector<float> Read(const Tensor& t, int64_t* direct) {
    const int64_t before = VmTesting::direct_reads();
    std::vector<float> v = t.to_vector<float>();
    *direct = VmTesting::direct_reads() - before;
    return v;
  }
  VirtualMachine& vm_ = VirtualMachine::Get();
  ScopeGuard restore_{[limit = VirtualMachine::Get().inline_bytes()] {
    VmTesting::SetInlineBytes(limit);
    VirtualMachine::Get().SetTracing(false);
  }};
};

TEST_F(DirectReadTest, AFinishedSmallTensorIsReadAtTheCallWithNoInstruction) {
  const Tensor x = ofl::tensor<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  vm_.Sync();
  int64_t direct = 0;
  EXPECT_EQ(Read(x, &direct), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(direct, 1);
  EXPECT_EQ(vm_.in_flight(), 0);
  // A strided view is read in row-major order, as through an instruction.
  EXPECT_EQ(Read(x.permute({1, 0}), &direct), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(direct, 1);
  EXPECT_EQ(Read(x.narrow(1, 1, 2), &direct), (std::vector<float>{2, 3, 5, 6}));
  EXPECT_EQ(direct, 1);
  std::vector<float> out(6, 0);
  const int64_t before = VmTesting::direct_reads();
  x.copy_to_host(out.data(), out.size() * sizeof(float));
  EXPECT_EQ(VmTesting::direct_reads(), before + 1);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(DirectReadTest, AnUnfinishedWriterIsWaitedForThroughAnInstruction) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  vm_.Sync();
  Latch gate;
  const BlobPtr blob = x.impl()->blob();
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "direct_read_test_writer", {}, {blob},
        [&gate, blob] {
          gate.WaitFor(kGenerousTimeout);
          reinterpret_cast<float*>(blob->data())[0] = 7;
        },
        CpuStream(StreamRole::kAux));
  });
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.Open();
  });
  int64_t direct = 0;
  EXPECT_EQ(Read(x, &direct), (std::vector<float>{7, 2, 3}));
  EXPECT_EQ(direct, 0);
  opener.join();
}

TEST_F(DirectReadTest, APoisonedTensorThrowsItsErrorThroughTheInstructionPath) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  vm_.Sync();
  const BlobPtr blob = x.impl()->blob();
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "direct_read_test_failing_writer", {}, {blob},
        [] { throw std::runtime_error("direct_read_test: writer failed on purpose"); },
        CpuStream(StreamRole::kCompute));
  });
  EXPECT_TRUE(testing::WaitUntil([&] { return blob->error() != nullptr; }));
  const int64_t before = VmTesting::direct_reads();
  try {
    x.to_vector<float>();
    ADD_FAILURE() << "reading a poisoned tensor did not throw";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "writer failed on purpose")) << e.what();
  }
  EXPECT_EQ(VmTesting::direct_reads(), before);
  try {
    vm_.Sync();
  } catch (const Error&) {
  }
}

TEST_F(DirectReadTest, TracingALimitOfZeroOrALargeTensorReadThroughAnInstruction) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}));
  vm_.Sync();
  int64_t direct = 0;
  vm_.SetTracing(true);  // the trace wants the read's instruction
  EXPECT_EQ(Read(x, &direct), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(direct, 0);
  vm_.SetTracing(false);
  vm_.TakeTrace();
  vm_.TakePoolEvents();
  VmTesting::SetInlineBytes(8);  // 12 bytes
  EXPECT_EQ(Read(x, &direct), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(direct, 0);
  VmTesting::SetInlineBytes(0);
  EXPECT_EQ(Read(x, &direct), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(direct, 0);
}

// Threads reading one finished tensor while others issue ops on it: every read sees its values
// (the TSan stage runs this).
TEST_F(DirectReadTest, ConcurrentReadersAndIssuersAgree) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}));
  vm_.Sync();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        if (t % 2 == 0) {
          if (x.to_vector<float>() != std::vector<float>{1, 2, 3}) ++wrong;
        } else {
          const Tensor y = x.expand({3, 2}).contiguous();
          if (y.to_vector<float>() != std::vector<float>{1, 1, 2, 2, 3, 3}) ++wrong;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace ofl::vm
