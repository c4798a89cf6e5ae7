// Ops issued while the process exits (vm/THREADING.md, "Exit and fork"): by a static destructor
// that runs before the runtime's exit hook, after glibc destroyed the exiting thread's
// thread_locals; and by a thread that keeps issuing while another thread calls std::exit. Either
// way the process must end with the status std::exit was given. Each case runs in a child process
// (gtest death tests, "threadsafe" style).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "oneflow_lite/extension.h"
#include "oneflow_lite/oneflow_lite.h"
#include "tests/vm/vm_test_util.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {
namespace {

using testing::VmTestDevice;

void Say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

class OpsDuringExitTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Made after the runtime started, so destroyed before the runtime's exit hook runs, and after
// exit() destroyed the exiting thread's thread_locals (the kernel contexts of direct and inline
// runs among them).
struct RunsOpsWhenDestroyed {
  Tensor t;
  ~RunsOpsWhenDestroyed() {
    // What the destroyed thread_locals held went back to malloc: take such blocks back and fill
    // them, so that a use of a destroyed one shows (a write changes them; a read sees garbage).
    std::vector<std::unique_ptr<unsigned char[]>> reused;
    std::vector<size_t> sizes;
    for (const size_t n : {sizeof(TensorArg), 2 * sizeof(TensorArg), sizeof(int64_t)}) {
      for (int i = 0; i < 4; ++i) {
        reused.emplace_back(new unsigned char[n]);
        sizes.push_back(n);
        std::memset(reused.back().get(), 0xA5, n);
      }
    }
    const std::vector<float> want = {1, 2, 3, 1, 2, 3};
    bool right = true;
    for (int i = 0; i < 8; ++i) right = right && t.repeat({2}).to_vector<float>() == want;
    for (size_t i = 0; i < reused.size(); ++i) {
      for (size_t b = 0; b < sizes[i]; ++b) {
        if (reused[i][b] != 0xA5) {
          Say("an op wrote into memory of a destroyed thread_local");
          return;
        }
      }
    }
    Say(right ? "the static destructor's ops ran" : "the static destructor's ops were wrong");
  }
};

[[noreturn]] void ExitWithAStaticThatRunsOpsWhenDestroyed() {
  // A small CPU op: run on this thread at the call (a direct run, or inline), with the thread's
  // kernel context. Run once first, so that the context exists and the output's block is cached.
  const Tensor t = tensor<float>({1, 2, 3}, Shape({3}), Device("cpu"));
  for (int i = 0; i < 3; ++i) t.repeat({2}).to_vector<float>();
  static RunsOpsWhenDestroyed holder{t};
  std::exit(0);
}

TEST_F(OpsDuringExitTest, SmallOpInAStaticDestructorAtExitRunsAndExitsCleanly) {
  EXPECT_EXIT(ExitWithAStaticThatRunsOpsWhenDestroyed(), ::testing::ExitedWithCode(0),
              "the static destructor's ops ran");
}

// The main thread issues ops and reads in a loop; another thread calls std::exit(0) meanwhile.
[[noreturn]] void IssueOpsWhileAnotherThreadExits() {
  const Tensor a = tensor<float>({1, 2, 3, 4}, Shape({4}), VmTestDevice());
  static std::atomic<bool> issuing{false};
  std::thread([] {
    while (!issuing.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Say("exiting from another thread");
    std::exit(0);
  }).detach();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const Tensor b = a.repeat({2}).narrow(0, 1, 4).contiguous();
    if (b.to_vector<float>() != std::vector<float>{2, 3, 4, 1}) {
      Say("wrong value");
      _exit(2);
    }
    issuing.store(true);
    if (std::chrono::steady_clock::now() > give_up) {
      Say("std::exit on the other thread never ended the process");
      _exit(3);
    }
  }
}

TEST_F(OpsDuringExitTest, IssuingWhileAnotherThreadCallsExitEndsWithTheExitStatus) {
  EXPECT_EXIT(IssueOpsWhileAnotherThreadExits(), ::testing::ExitedWithCode(0),
              "exiting from another thread");
}

}  // namespace
}  // namespace ofl::vm
