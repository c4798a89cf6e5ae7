// Tests that a process exiting with work still in the VM neither hangs nor crashes: the exit hook
// drains what can finish, gives up on an instruction that is stuck forever (after
// OFL_VM_EXIT_STALL_MS of no progress) and lets the process exit with its own exit code. Each case
// runs in a child process (gtest death tests, "threadsafe" style: the child is a fresh process).
// The stuck and busy instructions are CPU callbacks; the ordinary ops left in flight at exit run on
// VmTestDevice(), so on an asynchronous device the exit hook also drains launched, incomplete work.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {
namespace {

using testing::CpuStream;
using testing::Latch;
using testing::MakeCpuBlob;
using testing::SubmitWithoutWaiting;
using testing::VmTestDevice;
using testing::WaitUntil;

class ExitWithPendingWorkTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

void Say(const char* line) {
  std::fputs(line, stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

// Parks an instruction on a latch nobody opens and returns once it runs. Work that writes `stuck`
// or runs on the aux stream after it can never finish.
BlobPtr ParkAnInstructionForever() {
  BlobPtr stuck = MakeCpuBlob(64);
  auto* never = new Latch();  // never opened, never freed: the instruction waits on it forever
  auto started = std::make_shared<std::atomic<bool>>(false);
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "blocked_forever", {}, {stuck},
        [never, started] {
          started->store(true);
          never->Wait();
        },
        CpuStream(StreamRole::kAux));
  });
  if (!WaitUntil([&] { return started->load(); })) {
    Say("the blocked instruction never started");
    std::exit(3);
  }
  return stuck;
}

// Queues work behind the stuck instruction (its stream, its blob) and independent work elsewhere,
// announces when the independent work has run, and exits.
[[noreturn]] void ExitWithAStuckInstruction() {
  setenv("OFL_VM_EXIT_STALL_MS", "200", 1);  // read by the exit hook
  BlobPtr stuck = ParkAnInstructionForever();
  std::vector<BlobPtr> behind;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    for (int i = 0; i < 200; ++i) {
      behind.push_back(MakeCpuBlob(8));
      b->Function(
          "behind_on_stream", {}, {behind.back()}, [] {}, CpuStream(StreamRole::kAux));
      b->Function(
          "reads_stuck", {stuck}, {}, [] {}, CpuStream(StreamRole::kHost2Device));
    }
  });
  // Independent ops, left alive and unread at exit.
  static std::vector<Tensor>* live = new std::vector<Tensor>();
  for (int i = 0; i < 300; ++i) {
    live->push_back(
        tensor<float>({static_cast<float>(i), 1}, Shape({2}), VmTestDevice()).repeat({3}));
  }
  PhysicalRun([](InstructionsBuilder* b) {
    b->Function(
        "marker", {}, {}, [] { Say("independent work ran before exit"); },
        CpuStream(StreamRole::kCompute));
  });
  std::exit(0);
}

TEST_F(ExitWithPendingWorkTest, ExitWithAnInstructionBlockedForeverDoesNotHang) {
  EXPECT_EXIT(ExitWithAStuckInstruction(), ::testing::ExitedWithCode(0),
              "independent work ran before exit");
}

[[noreturn]] void ExitWhileAnotherThreadWaitsOnStuckWork() {
  setenv("OFL_VM_EXIT_STALL_MS", "200", 1);
  ParkAnInstructionForever();
  std::atomic<bool> waiting{false};
  // This thread's sync() can never return; exit must not wait for it.
  std::thread([&waiting] {
    waiting.store(true);
    try {
      sync();
    } catch (...) {
    }
    Say("sync returned although an instruction never finished");
  }).detach();
  WaitUntil([&] { return waiting.load(); });
  Say("exiting while a thread waits in sync");
  std::exit(0);
}

TEST_F(ExitWithPendingWorkTest, ExitWhileAnotherThreadWaitsInSyncDoesNotHang) {
  EXPECT_EXIT(ExitWhileAnotherThreadWaitsOnStuckWork(), ::testing::ExitedWithCode(0),
              "exiting while a thread waits in sync");
}

// Queues thousands of ordinary instructions on every stream and exits at once; the last one, which
// reads what every other one wrote, reports whether all of them ran.
[[noreturn]] void ExitWithOrdinaryWorkQueued() {
  constexpr int kPerStream = 500;
  const StreamRole roles[] = {StreamRole::kCompute, StreamRole::kHost2Device,
                              StreamRole::kDevice2Host, StreamRole::kAux};
  auto* ran = new std::atomic<int>(0);
  std::vector<BlobPtr> lanes;
  for (int s = 0; s < 4; ++s) lanes.push_back(MakeCpuBlob(8));
  for (int i = 0; i < kPerStream; ++i) {
    PhysicalRun([&](InstructionsBuilder* b) {
      for (int s = 0; s < 4; ++s) {
        b->Function(
            "busy", {}, {lanes[static_cast<size_t>(s)]},
            [ran] {
              const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
              while (std::chrono::steady_clock::now() < until) {
              }
              ran->fetch_add(1);
            },
            CpuStream(roles[s]));
      }
    });
  }
  static std::vector<Tensor>* live = new std::vector<Tensor>();
  for (int i = 0; i < 200; ++i) {
    live->push_back(tensor<float>({static_cast<float>(i)}, Shape({1, 1}), VmTestDevice())
                        .expand({4, 4})
                        .contiguous());
  }
  PhysicalRun([&](InstructionsBuilder* b) {
    b->Function(
        "last", lanes, {},
        [ran] {
          Say(ran->load() == 4 * kPerStream ? "all queued instructions ran"
                                            : "some queued instructions did not run");
        },
        CpuStream(StreamRole::kAux));
  });
  std::exit(0);
}

TEST_F(ExitWithPendingWorkTest, ExitWithOrdinaryWorkQueuedDrainsItFirst) {
  EXPECT_EXIT(ExitWithOrdinaryWorkQueued(), ::testing::ExitedWithCode(0),
              "all queued instructions ran");
}

}  // namespace
}  // namespace ofl::vm
