// `empty` on the CPU takes a cached block of the pool on the calling thread, with no instruction
// (VirtualMachine::AllocateAtIssue); whenever that could fail or needs the backend it issues the
// allocating instruction as before, so out-of-memory still surfaces at the read.
#include <string>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "tests/vm/vm_test_util.h"

namespace ofl::vm {
namespace {

using testing::CpuStream;
using testing::kGenerousTimeout;
using testing::Latch;
using testing::SubmitWithoutWaiting;

class EmptyAtIssueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ofl::sync();
    // A cached block for the (4,3) floats below.
    { Tensor warm = ofl::empty(Shape({4, 3})); }
    ofl::sync();
  }
  void TearDown() override { pool_->SetFailAt(0); }
  CachingAllocator* pool_ = VirtualMachine::Get().devices().GetAllocator(Device("cpu"));
};

TEST_F(EmptyAtIssueTest, GetsACachedBlockAtTheCallWhileItsStreamIsBusy) {
  Latch gate;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "empty_at_issue_test_gate", {}, {}, [&] { gate.WaitFor(kGenerousTimeout); },
        CpuStream(StreamRole::kCompute));
  });
  const MemoryStats before = ofl::memory_stats(Device("cpu"));
  Tensor t = ofl::empty(Shape({4, 3}));
  // The worker is parked on the gate, so only the call itself can have allocated.
  EXPECT_TRUE(t.impl()->blob()->allocated());
  const MemoryStats after = ofl::memory_stats(Device("cpu"));
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  EXPECT_GT(after.allocated_bytes, before.allocated_bytes);
  gate.Open();
  ofl::sync();
  EXPECT_EQ(t.to_vector<float>().size(), 12u);
}

TEST_F(EmptyAtIssueTest, AnArmedFaultStillSurfacesAtTheReadNotAtTheCall) {
  pool_->SetFailAt(1);
  auto expect_injected = [](const OutOfMemory& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("empty"), std::string::npos) << what;
    EXPECT_NE(what.find("injected fault"), std::string::npos) << what;
  };
  try {
    // OFL_VM_SYNC=1 reports every error at the call, as the README says; otherwise at the read.
    Tensor t = ofl::empty(Shape({4, 3}));
    EXPECT_FALSE(VirtualMachine::Get().sync_mode()) << "OFL_VM_SYNC=1: the call did not throw";
    t.to_vector<float>();
    FAIL() << "the injected out-of-memory was lost";
  } catch (const OutOfMemory& e) {
    expect_injected(e);
  }
  EXPECT_NO_THROW(ofl::sync());
  EXPECT_EQ(ofl::empty(Shape({4, 3})).to_vector<float>().size(), 12u);
}

TEST_F(EmptyAtIssueTest, WithTracingOnItIsAnInstructionThatAllocates) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.StartTraceSession();
  { Tensor t = ofl::empty(Shape({4, 3})); }
  const TraceSession session = vm.StopTraceSession();
  bool found = false;
  for (const TraceRecord& r : session.records) {
    if (r.op == "empty") found = true;
  }
  EXPECT_TRUE(found) << "a traced empty left no instruction";
}

}  // namespace
}  // namespace ofl::vm
