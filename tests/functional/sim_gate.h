// SimStreamGate: holds one stream of a simulated device (its compute stream unless told otherwise)
// shut on the device, for deterministic tests of work in flight. While the gate is shut the
// stream's worker keeps launching (the VM sees "launched"), but nothing queued on the native
// stream runs or completes.
#pragma once

#include <atomic>
#include <future>
#include <thread>

#include "kernels/sim/sim_backend.h"
#include "oneflow_lite/device.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace ofl::testing {

class SimStreamGate {
 public:
  explicit SimStreamGate(const Device& device, vm::StreamRole role = vm::StreamRole::kCompute)
      : device_(device), role_(role) {
    std::shared_future<void> opened = gate_.get_future().share();
    kernels::sim::SimBackend::Instance().Enqueue(Stream()->native(), [opened] { opened.wait(); });
  }
  ~SimStreamGate() { Open(); }
  SimStreamGate(const SimStreamGate&) = delete;
  SimStreamGate& operator=(const SimStreamGate&) = delete;

  void Open() {
    if (!open_) gate_.set_value();
    open_ = true;
  }

  // Returns once the stream's worker launched everything issued to it so far: a probe queued
  // behind that work has run on the worker.
  void WaitUntilLaunched() {
    std::atomic<bool> probed{false};
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      b->Function(
          "launch_probe", {}, {}, [&probed] { probed.store(true); }, Stream());
    });
    while (!probed.load()) std::this_thread::yield();
  }

 private:
  vm::Stream* Stream() const {
    return vm::VirtualMachine::Get().devices().GetStream(device_, role_);
  }

  Device device_;
  vm::StreamRole role_;
  std::promise<void> gate_;
  bool open_ = false;
};

}  // namespace ofl::testing
