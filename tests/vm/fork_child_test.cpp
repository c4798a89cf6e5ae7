// fork() while the runtime has work in flight (vm/THREADING.md, "Exit and fork"): the child has
// none of the parent's worker threads, so nothing queued would ever run there. Any op, read or
// sync in the child throws ofl::Error at once saying so (as PyTorch does for CUDA in a forked
// child), and a child that only exits does so at once, without waiting for workers it does not
// have. The parent keeps working. Each case runs in a fresh process (a gtest death test,
// "threadsafe" style) that forks; the hang timeouts are set far beyond the bound the test waits for
// its child, so a child that waits for a missing worker fails the test instead of ending on its
// own.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::vm {
namespace {

using testing::CpuStream;
using testing::Latch;
using testing::MakeCpuBlob;
using testing::SubmitWithoutWaiting;

void Say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

class ForkChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // OFL_VM_SYNC=1 waits for every op at its call: the tensor queued behind the parked
    // instruction below would be waited for.
    if (VirtualMachine::Get().sync_mode()) GTEST_SKIP() << "needs asynchronous issue";
#if defined(__SANITIZE_THREAD__)
    // TSan does not support a process that forks while other threads run (its child may die in
    // the sanitizer's runtime); the ASan and normal builds run these tests.
    GTEST_SKIP() << "ThreadSanitizer does not support fork() in a multi-threaded process";
#endif
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

// Whether `fn` throws ofl::Error naming the forked child.
bool RefusedAsForked(const char* what, const std::function<void()>& fn) {
  try {
    fn();
    Say(std::string(what) + " returned in the forked child");
  } catch (const Error& e) {
    if (std::string(e.what()).find("cannot be used in a forked child") != std::string::npos) {
      return true;
    }
    Say(std::string(what) + " threw another error in the forked child: " + e.what());
  }
  return false;
}

// Tensors of the forking process, for its child. Never destroyed by the parent.
Tensor* queued = nullptr;  // issued behind the parked instruction: needs the worker
Tensor* doomed = nullptr;  // the child drops it (its storage dies in the child)

// Parks the CPU compute worker, queues a tensor behind it and forks; the child runs `child` (which
// must end the process). The parent waits for the child with a bound, opens the gate, checks that
// its own tensors read back and exits 0 when everything held.
[[noreturn]] void ForkWithWorkInFlight(const std::function<void()>& child) {
  VmTesting::SetWaitTimeout(600);
  VmTesting::SetExitStallMs(600000);
  auto* gate = new Latch();  // freed with the process
  BlobPtr parked = MakeCpuBlob(8);
  auto* started = new std::atomic<bool>(false);
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "parked", {}, {parked},
        [gate, started] {
          started->store(true);
          gate->Wait();
        },
        CpuStream(StreamRole::kCompute));
  });
  while (!started->load()) std::this_thread::yield();
  queued = new Tensor(tensor<float>({1, 2, 3}, Shape({3}), Device("cpu")));
  doomed = new Tensor(queued->repeat({2}));
  const pid_t pid = fork();
  if (pid == 0) {
    child();
    _exit(9);  // `child` must end the process itself
  }
  if (pid < 0) {
    Say("fork failed");
    std::exit(1);
  }
  int status = 0;
  bool hung = false;
  const auto give_up = std::chrono::steady_clock::now() + testing::kGenerousTimeout;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      hung = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  gate->Open();
  VmTesting::SetExitStallMs(2000);
  if (hung) {
    Say("the forked child hung");
    std::exit(1);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Say("the forked child failed: status " + std::to_string(status));
    std::exit(1);
  }
  if (queued->to_vector<float>() != std::vector<float>{1, 2, 3} ||
      doomed->to_vector<float>() != std::vector<float>{1, 2, 3, 1, 2, 3}) {
    Say("the parent read wrong values");
    std::exit(1);
  }
  Say("the child ended cleanly and the parent works");
  std::exit(0);
}

TEST_F(ForkChildTest, ReadsOpsAndSyncInAForkedChildThrowAtOnce) {
  EXPECT_EXIT(
      ForkWithWorkInFlight([] {
        bool ok = RefusedAsForked("to_vector", [] { queued->to_vector<float>(); });
        ok = RefusedAsForked("repeat", [] { queued->repeat({2}); }) && ok;
        ok = RefusedAsForked("tensor", [] { tensor<float>({1}, Shape({1}), Device("cpu")); }) && ok;
        ok = RefusedAsForked("sync", [] { ofl::sync(); }) && ok;
        if (ok) Say("the forked child's reads, ops and sync threw at once");
        delete doomed;
        std::exit(ok ? 0 : 1);
      }),
      ::testing::ExitedWithCode(0),
      "threw at once(.|\n)*the child ended cleanly and the parent works");
}

TEST_F(ForkChildTest, AForkedChildThatOnlyExitsEndsAtOnce) {
  EXPECT_EXIT(ForkWithWorkInFlight([] {
                delete doomed;  // its storage dies in the child
                std::exit(0);
              }),
              ::testing::ExitedWithCode(0), "the child ended cleanly and the parent works");
}

}  // namespace
}  // namespace ofl::vm
