// The out-of-memory retry of an asynchronous device (InstructionPolicy::Prepare): before it
// retries, the worker drains the device's launched work so that pending frees land. It must not
// wait for work that only it can complete (vm/THREADING.md, "Memory"): here the h2d worker fails an
// allocation while the compute stream's launched head waits on the device for an h2d copy that only
// the h2d worker polls. Each case runs in a child process (a fresh VM, so the stream order is
// known, and a deadlock costs one short hang timeout instead of the suite).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/functional/sim_gate.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::vm {
namespace {

void Say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

// a = host -> sim:1 (h2d, held on the device by a gate), b = a.repeat (compute, waits on the device
// for a), then a host -> sim:1 copy whose allocation cannot fit: its retry runs on the h2d worker.
[[noreturn]] void FailAnH2dAllocationWhileComputeWaitsForH2dWork() {
  VirtualMachine& vm = VirtualMachine::Get();
  VmTesting::SetWaitTimeout(3);  // the broken retry deadlocks: fail in seconds, not minutes
  const Device dev("sim:1");
  // The compute stream first: a drain that goes stream by stream visits it before h2d.
  vm.devices().GetStream(dev, StreamRole::kCompute);
  vm.devices().GetStream(dev, StreamRole::kHost2Device);
  set_memory_limit(dev, int64_t{4} << 20);  // a and b fit one 2 MiB segment; c does not fit
  std::vector<float> host(1024);
  std::iota(host.begin(), host.end(), 0.0f);
  std::vector<float> big(size_t{2} << 20, 1.0f);  // 8 MiB
  Tensor a, b, c;
  {
    testing::SimStreamGate gate(dev, StreamRole::kHost2Device);
    a = tensor<float>(host, Shape({1024}), dev);
    b = a.repeat({2});
    c = tensor<float>(big, Shape({static_cast<int64_t>(big.size())}), dev);
    // Opened once the h2d worker is (most likely) inside c's retry; the outcome must not depend
    // on when.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  try {
    c.to_vector<float>();
    Say("reading c succeeded although it cannot fit");
    std::exit(2);
  } catch (const OutOfMemory& e) {
    Say(std::string("reading c: OutOfMemory: ") + e.what());
  } catch (const std::exception& e) {
    Say(std::string("reading c did not report OutOfMemory: ") + e.what());
    std::exit(1);
  }
  try {
    const std::vector<float> got_a = a.to_vector<float>();
    const std::vector<float> got_b = b.to_vector<float>();
    for (size_t i = 0; i < host.size(); ++i) {
      if (got_a[i] != host[i] || got_b[i] != host[i] || got_b[i + host.size()] != host[i]) {
        Say("wrong value at " + std::to_string(i));
        std::exit(3);
      }
    }
  } catch (const std::exception& e) {
    Say(std::string("reading a and b failed: ") + e.what());
    std::exit(4);
  }
  Say("the device kept working");
  std::exit(0);
}

TEST(OutOfMemoryRetryTest, RetryOnACopyStreamReportsOutOfMemoryInsteadOfDeadlocking) {
  // OFL_VM_SYNC=1 waits for every op at its call: the gated copy would be waited for.
  if (VirtualMachine::Get().sync_mode()) GTEST_SKIP() << "needs asynchronous issue";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(FailAnH2dAllocationWhileComputeWaitsForH2dWork(), ::testing::ExitedWithCode(0),
              "reading c: OutOfMemory(.|\n)*the device kept working");
}

}  // namespace
}  // namespace ofl::vm
