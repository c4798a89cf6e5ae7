// Helpers shared by the VM tests: the device the device-independent tests run on, a latch that a
// blocked instruction waits on (with a timeout, so a broken VM fails a test instead of hanging it),
// a scope guard for process-wide settings, raw blobs on the CPU, and a submission that never waits
// (even in OFL_VM_SYNC=1 mode).
//
// Which tests follow VmTestDevice(): those that only go through the public API (tensors, ops,
// reads, memory stats, releases) and callbacks that never touch blob memory. Tests whose callbacks
// read or write blob bytes on the host (FunctionPolicy, AccessBlobByCallback), and tests of
// CPU-only machinery (the CPU pool's hooks, CPU stream names, callbacks that block a CPU worker),
// stay on Device("cpu"): a host read of "sim" memory crashes by design.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "oneflow_lite/device.h"
#include "oneflow_lite/settings.h"
#include "vm/eager_blob_object.h"
#include "vm/instructions_builder.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm::testing {

// How long a test waits for something that a correct VM delivers in microseconds.
inline constexpr std::chrono::seconds kGenerousTimeout{20};

// A one-shot gate: Wait* blocks until Open() has been called.
class Latch {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Returns false when the timeout passed with the latch still closed.
  bool WaitFor(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return open_; });
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  bool is_open() {
    std::lock_guard<std::mutex> lock(mu_);
    return open_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Runs a function when the scope ends (restores process-wide VM and pool settings).
class ScopeGuard {
 public:
  explicit ScopeGuard(std::function<void()> fn) : fn_(std::move(fn)) {}
  ~ScopeGuard() {
    if (fn_) fn_();
  }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  std::function<void()> fn_;
};

// The device the device-independent VM tests run on: OFL_TEST_DEVICE ("cpu" when unset), the same
// rule as TestDevice() in tests/functional/functional_test_util.h. CTest runs the suite once per
// device (vm.on_sim0, vm.on_sim1), so the VM's asynchronous paths (launched is not complete, events
// between streams, frees after completion) are exercised by the same tests as the CPU's.
inline Device VmTestDevice() {
  static const Device device(settings::String("OFL_TEST_DEVICE"));
  return device;
}

// A stream of VmTestDevice(), for callbacks that touch no blob memory (they only block, count or
// throw), so that they may run on any device's worker.
inline Stream* VmTestStream(StreamRole role) {
  return VirtualMachine::Get().devices().GetStream(VmTestDevice(), role);
}

inline Stream* CpuStream(StreamRole role) {
  return VirtualMachine::Get().devices().GetStream(Device("cpu"), role);
}

// A raw blob on cpu:0 whose producer is the compute stream; memory comes in the first writer's
// Prepare.
inline BlobPtr MakeCpuBlob(size_t bytes) {
  return std::make_shared<EagerBlobObject>(Device("cpu"), bytes, CpuStream(StreamRole::kCompute));
}

// Builds a batch and hands it to the VM without waiting for it, in either VM mode: tests that park
// an instruction on a latch must not wait for it on the thread that opens the latch.
template <class F>
void SubmitWithoutWaiting(F&& fn) {
  InstructionsBuilder builder;
  fn(&builder);
  VirtualMachine::Get().Submit(builder.instructions());
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Polls `pred` until it holds or the timeout passes; returns its last value.
template <class Pred>
bool WaitUntil(Pred&& pred, std::chrono::milliseconds timeout = kGenerousTimeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Runs fn on a detached thread and reports whether it finished within the timeout, so that a
// deadlock fails the test instead of hanging it (the stuck thread is abandoned).
inline bool FinishesWithin(std::function<void()> fn,
                           std::chrono::milliseconds timeout = kGenerousTimeout) {
  auto finished = std::make_shared<Latch>();
  std::thread([fn = std::move(fn), finished] {
    fn();
    finished->Open();
  }).detach();
  return finished->WaitFor(timeout);
}

}  // namespace ofl::vm::testing
