// Tests that a dead tensor's memory goes back to the pool in order: the free issued when its last
// handle dies (a ReleaseTensor instruction, or folded into the last user when every unfinished user
// is on one stream) happens only after every instruction still using the storage, even ones blocked
// on other streams; afterwards the pool's allocated bytes return to what they were before.
// The blocked-reader tests sum the storage on the host inside their callbacks, so they run on the
// CPU; the rest runs on VmTestDevice().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
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

using testing::CpuStream;
using testing::Latch;
using testing::SubmitWithoutWaiting;
using testing::VmTestDevice;
using testing::VmTestStream;
using testing::WaitUntil;

constexpr int64_t kNumel = 64 << 10;  // 256 KiB of float
constexpr int64_t kBytes = kNumel * 4;

int64_t Allocated(const Device& device = VmTestDevice()) {
  return memory_stats(device).allocated_bytes;
}

// Bytes the pool cannot hand out: live tensors' blocks plus dead tensors' blocks whose users have
// not completed (which count as free from the tensor's death on, as in PyTorch).
int64_t Held(const Device& device = VmTestDevice()) {
  const MemoryStats s = memory_stats(device);
  return s.allocated_bytes + s.pending_free_bytes;
}

std::vector<float> Ramp(float start) {
  std::vector<float> v(static_cast<size_t>(kNumel));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i % 1000);
  return v;
}

// Parks one reader of a fresh tensor on each of `reader_roles` (each behind its own gate), drops
// the tensor's last handle, then lets the readers finish one at a time, the last issued first. The
// block counts as free from the drop on, but must stay out of the pool, and untouched, until the
// first-issued reader has finished too.
void CheckBlockedReadersKeepTheBlock(const std::vector<StreamRole>& reader_roles) {
  // The readers dereference the block on the host: CPU memory only.
  const Device cpu("cpu");
  const size_t n = reader_roles.size();
  sync();
  empty_cache(cpu);
  const int64_t before = Allocated(cpu);
  const std::vector<float> values = Ramp(1.f);
  double want_sum = 0;
  for (float v : values) want_sum += v;

  Tensor t = tensor<float>(values, Shape({kNumel}), cpu);
  sync();
  EXPECT_GE(Allocated(cpu), before + kBytes);

  // Each reader sums the storage only after its gate opened.
  std::vector<Latch> gates(n);
  std::vector<std::atomic<bool>> started(n), finished(n);
  std::vector<double> sums(n, -1);
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    for (size_t i = 0; i < n; ++i) {
      const BlobPtr& blob = t.impl()->blob();
      b->Function(
          "blocked_reader", {blob}, {},
          [&, i, raw = blob.get()] {
            started[i].store(true);
            gates[i].WaitFor(testing::kGenerousTimeout);
            const float* data = reinterpret_cast<const float*>(raw->data());
            if (data != nullptr) {  // else the block was taken away: the sum stays -1
              double sum = 0;
              for (int64_t k = 0; k < kNumel; ++k) sum += data[k];
              sums[i] = sum;
            }
            finished[i].store(true);
          },
          CpuStream(reader_roles[i]));
    }
  });
  ASSERT_TRUE(WaitUntil([&] {
    for (const auto& s : started) {
      if (!s.load()) return false;
    }
    return true;
  }));

  // The last handle dies on another thread: in OFL_VM_SYNC=1 mode that thread waits for the
  // release.
  std::thread dropper([&] { t = Tensor(); });
  dropper.join();  // dropping never waits for the readers
  EXPECT_EQ(Allocated(cpu), before) << "a dead tensor's block counts as free at once";
  EXPECT_EQ(memory_stats(cpu).pending_free_bytes, kBytes);
  std::vector<int64_t> held_while_blocked = {Held(cpu)};
  for (size_t i = n; i-- > 1;) {
    gates[i].Open();
    EXPECT_TRUE(WaitUntil([&] { return finished[i].load(); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    held_while_blocked.push_back(Held(cpu));
  }
  // Ask for a same-sized block and fill it: a block released too early would be handed out here
  // and overwritten under the reader that is still blocked.
  std::vector<float> reuse_values;
  std::thread reuser([&] {
    const Tensor reuse = tensor<float>(Ramp(5000.f), Shape({kNumel}), cpu);
    reuse_values = reuse.to_vector<float>();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gates[0].Open();
  reuser.join();
  sync();

  for (int64_t held : held_while_blocked) {
    EXPECT_GE(held, before + kBytes)
        << "the block went back to the pool while a reader was still using it";
  }
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(sums[i], want_sum) << "reader " << i << " saw its storage change or vanish";
  }
  EXPECT_EQ(reuse_values, Ramp(5000.f));
  EXPECT_EQ(Allocated(cpu), before) << "allocated bytes did not return to the level before";
  EXPECT_EQ(memory_stats(cpu).pending_free_bytes, 0) << "pending after sync()";
}

TEST(ReleaseTensorTest, BlockOutlivesTheLastHandleUntilABlockedReaderFinishes) {
  // The only unfinished user is on one stream: the free can ride on that reader.
  CheckBlockedReadersKeepTheBlock({StreamRole::kDevice2Host});
}

TEST(ReleaseTensorTest, BlockOutlivesTheLastHandleUntilBlockedReadersOnTwoStreamsFinish) {
  // Unfinished users on two streams: the free must wait for both.
  CheckBlockedReadersKeepTheBlock({StreamRole::kDevice2Host, StreamRole::kAux});
}

TEST(ReleaseTensorTest, BlockOutlivesTheLastHandleUntilAReaderOnTheProducerStreamFinishes) {
  CheckBlockedReadersKeepTheBlock({StreamRole::kCompute});
}

TEST(ReleaseTensorTest, DyingTensorNeitherBlocksNorThrowsBehindABlockedReader) {
  // Matters most in OFL_VM_SYNC=1 mode (CTest's vm.vm_sync), where every other call waits for its
  // work: a destructor that waited for the release behind a blocked reader would throw the hang
  // report out of a noexcept destructor (std::terminate) after the tiny timeout.
  VirtualMachine& vm = VirtualMachine::Get();
  sync();
  const int64_t before = Allocated();
  const double saved = vm.wait_timeout();
  testing::ScopeGuard restore([saved] { VmTesting::SetWaitTimeout(saved); });
  Tensor t = tensor<float>(Ramp(3.f), Shape({kNumel}), VmTestDevice());
  sync();
  VmTesting::SetWaitTimeout(0.05);
  Latch gate;
  std::atomic<bool> started{false};
  // The reader only blocks and never touches the bytes, so it may hold the test device's worker.
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "blocked_reader", {t.impl()->blob()}, {},
        [&] {
          started.store(true);
          gate.WaitFor(testing::kGenerousTimeout);
        },
        VmTestStream(StreamRole::kDevice2Host));
  });
  ASSERT_TRUE(WaitUntil([&] { return started.load(); }));
  // The last handle dies while its reader is blocked; the gate stays closed until it returned.
  std::atomic<bool> dropped{false};
  std::thread dropper([&] {
    t = Tensor();
    dropped.store(true);
  });
  EXPECT_TRUE(WaitUntil([&] { return dropped.load(); }))
      << "the destructor waited for the release behind the blocked reader";
  EXPECT_GE(Held(), before + kBytes) << "freed under a blocked reader";
  EXPECT_EQ(Allocated(), before) << "a dead tensor's block counts as free at once";
  gate.Open();
  dropper.join();
  VmTesting::SetWaitTimeout(saved);
  EXPECT_NO_THROW(sync()) << "a release must leave nothing to report";
  EXPECT_EQ(Allocated(), before);
  EXPECT_EQ(memory_stats(VmTestDevice()).pending_free_bytes, 0) << "pending after sync()";
}

TEST(ReleaseTensorTest, TensorCapturedByAnInstructionIsReleasedWhenTheInstructionRetires) {
  // The VM destroys a retired instruction's callback, and with it the tensor's last handle, whose
  // death queues a release: this must not happen under the VM's own lock.
  sync();
  const int64_t before = Allocated();
  {
    const Tensor x = tensor<float>(Ramp(0.f), Shape({kNumel}), VmTestDevice());
    PhysicalRun([&](InstructionsBuilder* b) {
      b->Function(
          "holds_x", {}, {}, [x] { (void)x.numel(); }, CpuStream(StreamRole::kAux));
    });
  }
  const bool finished = testing::FinishesWithin([] {
    try {
      sync();
      sync();
    } catch (...) {
    }
  });
  ASSERT_TRUE(finished) << "sync deadlocked while retiring an instruction that held a tensor";
  EXPECT_EQ(Allocated(), before);
}

TEST(ReleaseTensorTest, ViewsKeepTheStorageAndTheLastOneReleasesIt) {
  sync();
  const int64_t before = Allocated();
  Tensor base = tensor<float>(Ramp(0.f), Shape({kNumel}), VmTestDevice());
  Tensor view = base.narrow(0, 10, 4);
  Tensor other_view = base.reshape({256, 256}).permute({1, 0});
  base = Tensor();
  sync();
  EXPECT_GE(Allocated(), before + kBytes) << "released while views were alive";
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{10, 11, 12, 13}));
  view = Tensor();
  sync();
  EXPECT_GE(Allocated(), before + kBytes) << "released while a view was alive";
  EXPECT_EQ(other_view.narrow(1, 0, 2).narrow(0, 1, 1).to_vector<float>(),
            (std::vector<float>{1, 257}));
  other_view = Tensor();
  sync();
  EXPECT_EQ(Allocated(), before);
}

// The holds on a storage are counted in its blob (ofl::StorageRef): copies, moves, assignments
// and self-assignment each keep the count right, so the storage goes back exactly when the last
// hold goes, and only once.
TEST(ReleaseTensorTest, StorageHoldsCountCopiesMovesAndAssignments) {
  sync();
  const int64_t before = Allocated();
  Tensor x = tensor<float>(Ramp(0.f), Shape({kNumel}), VmTestDevice());
  StorageRef a = x.impl()->storage();
  StorageRef b;
  EXPECT_FALSE(b);
  b = a;
  StorageRef c(std::move(b));
  EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): a moved-from hold is empty
  EXPECT_TRUE(c == a);
  // One storage: its version counter (above the VM, in ofl::Storage) is the one every hold and
  // every view of the tensor reads.
  x.narrow(0, 0, 1).add_(1.0);
  EXPECT_EQ(a->version(), 1u);
  EXPECT_EQ(c->version(), 1u);
  EXPECT_EQ(x.version(), 1);
  const StorageRef& same = a;
  a = same;  // self-assignment
  x = Tensor();
  sync();
  EXPECT_GE(Allocated(), before + kBytes) << "released while two holds were alive";
  a = StorageRef();
  sync();
  EXPECT_GE(Allocated(), before + kBytes) << "released while a hold was alive";
  EXPECT_TRUE(c.blob()->allocated());
  c = StorageRef();
  sync();
  EXPECT_EQ(Allocated(), before);
}

TEST(ReleaseTensorTest, ManyShortLivedTensorsReturnEveryBlock) {
  sync();
  const int64_t before = Allocated();
  const MemoryStats stats_before = memory_stats(VmTestDevice());
  for (int i = 0; i < 200; ++i) {
    const Tensor a = tensor<float>({static_cast<float>(i), 1, 2}, Shape({3}), VmTestDevice());
    const Tensor b = a.repeat({4}).reshape({4, 3}).permute({1, 0}).contiguous();
    if (i % 100 == 0) {
      EXPECT_EQ(b.narrow(0, 0, 1).to_vector<float>(),
                (std::vector<float>(4, static_cast<float>(i))));
    }
  }
  sync();
  EXPECT_EQ(Allocated(), before);
  // Blocks were reused rather than requested anew each time.
  const MemoryStats stats_after = memory_stats(VmTestDevice());
  EXPECT_GT(stats_after.cache_hits - stats_before.cache_hits, 400);
}

}  // namespace
}  // namespace ofl::vm
